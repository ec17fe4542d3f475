#!/usr/bin/env python3
"""The Grafana dashboard (docs/grafana/gpupart-dashboard.json) parses, and every gpupart_* metric its
queries use is one the exporter's code exports (the metric names in its sources): a renamed metric fails
here, not silently on a wall screen.
    check_dashboard.py DASHBOARD SOURCE..."""
import json, re, sys

dashboard = json.load(open(sys.argv[1]))
names = set()
for source in sys.argv[2:]:
    names |= set(re.findall(r'"(gpupart_\w+)"', open(source).read()))
histograms = {"gpupart_set_to_first_launch_seconds"} & names
known = names | {h + suffix for h in histograms for suffix in ("_bucket", "_sum", "_count")}
used = set()
for panel in dashboard["panels"]:
    for target in panel.get("targets", []):
        used |= set(re.findall(r"\bgpupart_\w+", target["expr"]))
for variable in dashboard["templating"]["list"]:
    used |= set(re.findall(r"\bgpupart_\w+", variable["query"]))
unknown = sorted(used - known)
if unknown or not used or not names:
    print("dashboard uses metrics the exporter does not export:", ", ".join(unknown) or "(none used or none known)")
    sys.exit(1)
print(f"dashboard: {len(dashboard['panels'])} panels, {len(used)} gpupart metrics, all exported")
