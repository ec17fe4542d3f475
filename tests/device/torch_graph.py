#!/usr/bin/env python3
"""A plain PyTorch program (it knows nothing about gpupart) that replays a captured CUDA graph.

graph_tests.sh runs it under `gpupart run --tpcs gpc0` and widens it with `gpupart set PID all` while it
runs: the graph, uploaded on gpc0, must follow the new mask (replays get faster) and keep computing the
same numbers.

    torch_graph.py [--seconds S] [--size N] [--dtype bf16|fp32] [--batch-s B] [--ready-file PATH]

The graph (torch.cuda.CUDAGraph, captured with torch.cuda.graph after a warm-up on a side stream):
y = tanh(tanh(tanh(tanh(x @ w0) @ w1) @ w2) @ w3), N x N (default 4096, bf16), the weights scaled so
that values stay near 1. x is a static input: each batch copies one of four fixed inputs (seeded) into
it, replays the graph for B seconds (default 0.25), waiting for each replay, then fills the static
output with NaN, replays once more and compares it with the same computation run eagerly
(torch.allclose: bf16 rtol 2e-2 atol 2e-2, fp32 rtol 1e-4 atol 1e-4). Changing the input and
poisoning the output make a replay that silently did nothing fail the check.

stdout, each line flushed:
    pid <pid>
    t <seconds since the first batch began, 2 decimals> replays_per_s <rate, 1 decimal> check ok
    t <...> replays_per_s <...> check BAD max_abs_diff <largest difference>
    done
--ready-file PATH: created once the graph is captured and has replayed once (before the first batch).
Exit: 0 ok, 4 a check failed, 1 after --seconds + 120 s (a watchdog: faulthandler ends the process
even inside a CUDA call).
"""
import argparse
import faulthandler
import os
import sys
import time

import torch

TOLERANCE = {torch.bfloat16: (2e-2, 2e-2), torch.float32: (1e-4, 1e-4)}
LAYERS = 4
INPUTS = 4


def say(line):
    print(line, flush=True)


def forward(x, weights):
    y = x
    for w in weights:
        y = torch.tanh(y @ w)
    return y


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--dtype", choices=("bf16", "fp32"), default="bf16")
    parser.add_argument("--batch-s", type=float, default=0.25)
    parser.add_argument("--ready-file")
    args = parser.parse_args()
    faulthandler.dump_traceback_later(args.seconds + 120, exit=True)

    say(f"pid {os.getpid()}")
    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float32
    rtol, atol = TOLERANCE[dtype]
    n = args.size
    torch.manual_seed(0)
    weights = [(torch.randn(n, n, device="cuda") / n**0.5).to(dtype) for _ in range(LAYERS)]
    inputs = [torch.randn(n, n, device="cuda").to(dtype) for _ in range(INPUTS)]
    static_x = inputs[0].clone()

    # The warm-up on a side stream before capture is what the PyTorch documentation prescribes
    # (cuBLAS workspaces and the like are allocated outside the graph).
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            forward(static_x, weights)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_y = forward(static_x, weights)
    graph.replay()
    torch.cuda.synchronize()
    if args.ready_file:
        open(args.ready_file, "w").close()

    failed = False
    start = time.perf_counter()
    batch = 0
    while time.perf_counter() - start < args.seconds:
        static_x.copy_(inputs[batch % INPUTS])
        batch_start = time.perf_counter()
        replays = 0
        while time.perf_counter() - batch_start < args.batch_s:
            graph.replay()
            torch.cuda.synchronize()
            replays += 1
        rate = replays / (time.perf_counter() - batch_start)
        static_y.fill_(float("nan"))
        graph.replay()
        want = forward(static_x, weights)
        torch.cuda.synchronize()
        if torch.allclose(static_y, want, rtol=rtol, atol=atol):
            verdict = "ok"
        else:
            failed = True
            diff = (static_y.float() - want.float()).abs().nan_to_num(float("inf")).max().item()
            verdict = f"BAD max_abs_diff {diff:g}"
        say(f"t {time.perf_counter() - start:.2f} replays_per_s {rate:.1f} check {verdict}")
        batch += 1
    say("done")
    return 4 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
