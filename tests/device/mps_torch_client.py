"""A PyTorch MPS client for mps_soak.sh (SOAK_TORCH_LANES): matrix products on the GPU, like the client of
the incident docs/mps-fault-domain.md describes. Prints "ready <pid>" once the first product is done, then works for
--seconds and exits 0 after "done <pid> products <n>"; a CUDA error ends it with Python's traceback (exit 1)."""
import argparse
import os
import time

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--seconds", type=float, default=2.0)
args = parser.parse_args()
x = torch.randn(2048, 2048, device="cuda")
y = x @ x
torch.cuda.synchronize()
print(f"ready {os.getpid()}", flush=True)
products = 1
end = time.monotonic() + args.seconds
while time.monotonic() < end:
    for _ in range(8):
        y = torch.tanh(y @ x / 2048.0)
        products += 1
    torch.cuda.synchronize()
print(f"done {os.getpid()} products {products}", flush=True)
