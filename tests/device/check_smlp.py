#!/usr/bin/env python3
"""Verdicts of api_device.sh: SMLP requests on the SMs of their grants, grants disjoint in time, blocking.

check_smlp.py OUT_DIR RUN...   (RUN: the name given to run_three; files OUT_DIR/RUN-{high,mid,low}.csv)
Reads OUT_DIR/calibration.csv (bit -> SMs) and every worker's CSV; prints one verdict block per run and
exits 1 if any block ran outside its grant or two grants that were held at the same time overlapped.
"""
import statistics
import sys


def calibration(path):
    sms_of_bit = {}
    with open(path) as f:
        next(f)
        for line in f:
            bit, sms = line.strip().split(",", 1)
            sms_of_bit[int(bit)] = {int(s) for s in sms.split()}
    return sms_of_bit


def requests(path, who):
    out = []
    with open(path) as f:
        for line in f:
            if not line[:1].isdigit():  # the header, PAUSED
                continue
            parts = line.rstrip("\n").split(",")
            out.append({"who": who, "tpcs": int(parts[2]), "mask": int(parts[3], 16), "issued": int(parts[4]),
                        "granted": int(parts[5]), "done": int(parts[6]), "sms": {int(s) for s in parts[7].split()}})
    return out


def tpc_list(text):
    bits = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        bits |= set(range(int(lo), int(hi or lo) + 1))
    return bits


def check_smctrl(path, sms_of_bit):
    """gpupart-dev-smctrl's case lines: every block inside the TPCs the case allowed. Returns failures."""
    try:
        lines = [l.split() for l in open(path) if l.startswith("case ")]
    except OSError:
        print("== smctrl: no output")
        return 1
    bad = 0
    for words in lines:
        allowed = set()
        for bit in tpc_list(words[words.index("allowed") + 1]):
            allowed |= sms_of_bit.get(bit, set())
        sms = {int(w) for w in words[words.index(":") + 1:]}
        outside = sms - allowed
        bad += bool(outside)
        print(f"  smctrl {words[1]} via {words[3]} stream {words[5]}: {len(sms)} SMs, outside the mask: "
              f"{sorted(outside) if outside else 'none'}")
    print(f"== smctrl: {len(lines)} cases, {bad} with a block outside its mask")
    return bad


def check_numbering(sms_of_tpc):
    """The calibration (through the API, without MPS) in libsmctrl's numbering: TPC k ran on SMs 2k and 2k+1."""
    wrong = {k: sorted(sms) for k, sms in sms_of_tpc.items() if not sms or not sms <= {2 * k, 2 * k + 1}}
    print(f"== numbering: {len(sms_of_tpc)} TPCs alone, {len(wrong)} not on SMs 2k and 2k+1"
          + (f": {dict(list(wrong.items())[:8])}" if wrong else ""))
    return len(wrong)


def main():
    out_dir, runs = sys.argv[1], sys.argv[2:]
    sms_of_bit = calibration(f"{out_dir}/calibration.csv")  # keyed by TPC number: the API's numbering
    failed = check_smctrl(f"{out_dir}/smctrl.txt", sms_of_bit) > 0
    failed |= check_numbering(sms_of_bit) > 0
    for run in runs:
        reqs = []
        for who in ("high", "mid", "low"):
            reqs += requests(f"{out_dir}/{run}-{who}.csv", who)
        outside = 0
        for r in reqs:
            allowed = set()
            for bit, sms in sms_of_bit.items():
                if r["mask"] >> bit & 1:
                    allowed |= sms
            outside += len(r["sms"] - allowed)
        overlaps = 0
        for i, a in enumerate(reqs):
            for b in reqs[i + 1:]:
                if a["who"] != b["who"] and a["granted"] < b["done"] and b["granted"] < a["done"] and a["mask"] & b["mask"]:
                    overlaps += 1
        print(f"== {run}: {len(reqs)} requests")
        print(f"  blocks on an SM outside the request's grant: {outside}")
        print(f"  pairs of grants held at the same time that share a TPC: {overlaps}")
        for who in ("high", "mid", "low"):
            mine = [r for r in reqs if r["who"] == who]
            if not mine:
                print(f"  {who}: no request completed")
                failed = True
                continue
            waits = sorted((r["granted"] - r["issued"]) / 1e3 for r in mine)
            runs_us = sorted((r["done"] - r["granted"]) / 1e3 for r in mine)
            tpcs = sorted(r["tpcs"] for r in mine)
            print(f"  {who}: wait us median {statistics.median(waits):.0f} max {waits[-1]:.0f}; "
                  f"run us median {statistics.median(runs_us):.0f}; TPCs granted min {tpcs[0]} median "
                  f"{statistics.median(tpcs):.0f} max {tpcs[-1]}")
        span = (max(r["done"] for r in reqs) - min(r["issued"] for r in reqs)) / 1e6
        print(f"  all requests done in {span:.1f} ms")
        # %smid names SMs as the context sees them: under MPS a client's ids are not the calibration's
        # (blocks of a 2-TPC grant report SMs 0-3), so there only the grants and the timing are judged.
        if run.startswith("mps"):
            print("  (under MPS %smid is the client's own numbering: the SM check applies to runs without MPS)")
            failed |= overlaps > 0
        else:
            failed |= outside > 0 or overlaps > 0
    print("VERDICT", "FAIL" if failed else "PASS")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
