#!/usr/bin/env python3
"""The PyTorch victims of evidence.py: what the issue's anchors ran, and a small real network.

    torch_victim.py mm|net [--seconds S] [--out FILE]

mm: a 4096^3 bf16 torch.matmul, synchronised each step (the evidence runs' anchors). net: inference of a small
network, synchronised each step: torchvision's ResNet-18 on a batch of 32 224x224 images where torchvision is
installed, else a 6-layer transformer encoder (d_model 512, 8 heads, sequence 256, batch 16) built from torch.nn;
weights are random (the time of inference does not depend on them). After 0.5 s of warm-up, S seconds of
per-step latencies (us) go to FILE, one a line, and one line to stdout, as gpupart-bench-work victim prints:
"victim n N p50 .. p90 .. p99 .. max ..", then "network <what ran>"."""
import argparse
import time

import torch


def network():
    try:
        import torchvision
        model = torchvision.models.resnet18()
        x = torch.randn(32, 3, 224, 224)
        what = "torchvision resnet18, batch 32, 224x224"
    except ImportError:
        layer = torch.nn.TransformerEncoderLayer(d_model=512, nhead=8, batch_first=True)
        model = torch.nn.TransformerEncoder(layer, num_layers=6)
        x = torch.randn(16, 256, 512)
        what = "torch.nn transformer encoder, 6 layers, d_model 512, batch 16, sequence 256"
    model = model.cuda().eval().to(torch.bfloat16)
    x = x.cuda().to(torch.bfloat16)

    def step():
        with torch.inference_mode():
            model(x)
    return step, what


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kind", choices=["mm", "net"])
    ap.add_argument("--seconds", type=float, default=2)
    ap.add_argument("--out")
    args = ap.parse_args()
    if args.kind == "mm":
        a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
        step, what = (lambda: torch.matmul(a, b)), "torch.matmul 4096^3 bf16"
    else:
        step, what = network()
    until = time.perf_counter() + 0.5
    while time.perf_counter() < until:
        step()
        torch.cuda.synchronize()
    samples = []
    until = time.perf_counter() + args.seconds
    while time.perf_counter() < until:
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        samples.append((time.perf_counter() - t0) * 1e6)
    if args.out:
        with open(args.out, "w") as f:
            f.writelines(f"{s:.3f}\n" for s in samples)
    s = sorted(samples)

    def q(p):
        return s[min(len(s) - 1, int(p * len(s)))]
    print(f"victim n {len(s)} p50 {q(.5):.3f} p90 {q(.9):.3f} p99 {q(.99):.3f} max {s[-1]:.3f}")
    print(f"network {what}")


if __name__ == "__main__":
    main()
