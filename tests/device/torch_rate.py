#!/usr/bin/env python3
"""A PyTorch process whose throughput can be followed over time, synchronised each step, appending
"<unix seconds> <rate>" to FILE every 0.25 s for SECONDS:
  mm (default): a 4096^3 bf16 torch.matmul loop, rate in TFLOP/s (compute-bound);
  copy: a 1 GiB device-to-device tensor copy loop, rate in GB/s read + written (memory-bound).
Used by tests/device/gui_live.sh (a TPC change made in the app reaching a real process) and
tests/device/planner_device.sh (scaling curves of a compute- and a memory-bound process).

    torch_rate.py FILE SECONDS [mm|copy]"""
import sys
import time

import torch


def main():
    out, seconds = sys.argv[1], float(sys.argv[2])
    kind = sys.argv[3] if len(sys.argv) > 3 else "mm"
    if kind == "mm":
        a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
        step, per_step = (lambda: torch.matmul(a, b)), 2 * 4096 ** 3 / 1e12
    else:
        src = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
        dst = torch.empty_like(src)
        step, per_step = (lambda: dst.copy_(src)), 2 * (1 << 30) / 1e9
    with open(out, "w", buffering=1) as log:
        end = time.time() + seconds
        while time.time() < end:
            t0, steps = time.time(), 0
            while time.time() - t0 < 0.25:
                step()
                torch.cuda.synchronize()
                steps += 1
            t1 = time.time()
            log.write(f"{t1:.3f} {steps * per_step / (t1 - t0):.1f}\n")


if __name__ == "__main__":
    main()
