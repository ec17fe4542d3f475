#!/usr/bin/env python3
"""The Grafana dashboard (docs/grafana/gpupart-dashboard.json) parses, and every gpupart_* metric its
queries use is one the exporter's code exports (the metric names in its sources): a renamed metric fails
here, not silently on a wall screen. With --promtool, every query must also parse as PromQL (Grafana's
variables replaced by values).
    check_dashboard.py [--promtool PROMTOOL] DASHBOARD SOURCE..."""
import json, os, re, subprocess, sys, tempfile

args = sys.argv[1:]
promtool = None
if args[:1] == ["--promtool"]:
    promtool, args = args[1], args[2:]
dashboard = json.load(open(args[0]))
names = set()
for source in args[1:]:
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
if promtool:
    # promtool has no expression check of its own: each query becomes a recording rule of a rule file.
    grafana = {"$__rate_interval": "1m", "$__interval": "1m", "$Hostname": ".*", "$gpu": ".*"}
    rules = []
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            expr = target["expr"]
            for variable, value in grafana.items():
                expr = expr.replace(variable, value)
            rules.append({"record": f"dashboard:panel{panel['id']}:{target['refId']}", "expr": expr})
    with tempfile.NamedTemporaryFile("w", suffix=".yml", delete=False) as f:
        json.dump({"groups": [{"name": "dashboard", "rules": rules}]}, f)  # JSON is YAML
    try:
        check = subprocess.run([promtool, "check", "rules", f.name], capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    if check.returncode != 0:
        print("dashboard queries that are not PromQL:\n" + check.stdout + check.stderr)
        sys.exit(1)
    print(f"dashboard: {len(rules)} queries parse as PromQL")
