#!/usr/bin/env python3
"""A PyTorch process whose throughput can be followed over time: a 4096^3 bf16 torch.matmul loop,
synchronised each step, that appends "<unix seconds> <TFLOP/s>" to FILE every 0.25 s for S seconds.
Used by tests/device/gui_live.sh to see a TPC change made in the app reach a real process.

    torch_rate.py FILE SECONDS"""
import sys
import time

import torch


def main():
    out, seconds = sys.argv[1], float(sys.argv[2])
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    flop = 2 * 4096 ** 3
    with open(out, "w", buffering=1) as log:
        end = time.time() + seconds
        while time.time() < end:
            t0, steps = time.time(), 0
            while time.time() - t0 < 0.25:
                torch.matmul(a, b)
                torch.cuda.synchronize()
                steps += 1
            t1 = time.time()
            log.write(f"{t1:.3f} {steps * flop / (t1 - t0) / 1e12:.1f}\n")


if __name__ == "__main__":
    main()
