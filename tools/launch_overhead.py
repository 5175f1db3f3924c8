"""Per-call host cost of gems ops vs ATen, measured back to back (see shared notes, launch_overhead.md).

    python tools/launch_overhead.py [--numel 4096] [--calls 2000] [--rounds 7]

ATen is timed with gems unregistered (not through gems' wrapper), gems with it registered; rounds
alternate between the two so drift hits both. Prints the median microseconds per call.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

import gems


def _sync(device):
    if device == "cuda":
        torch.cuda.synchronize()


def per_call_us(fn, calls, device):
    fn()
    _sync(device)
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    _sync(device)
    return (time.perf_counter() - start) / calls * 1e6


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--numel", type=int, default=4096)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    device = gems.vendor().device
    x = torch.randn(args.numel, device=device)
    y = torch.randn(args.numel, device=device)
    cases = {
        "abs": lambda: torch.abs(x),
        "exp": lambda: torch.exp(x),
        "add": lambda: torch.add(x, y),
        "mul": lambda: torch.mul(x, y),
        "add_scalar": lambda: torch.add(x, 2.0),
        "sum": lambda: torch.sum(x),
        "softmax": lambda: torch.softmax(x.view(64, -1), dim=-1),
    }
    print(f"{'op':<12}{'aten us':>10}{'gems us':>10}{'ratio':>8}")
    for name, fn in cases.items():
        aten, mine = [], []
        for _ in range(args.rounds):
            gems.disable()
            aten.append(per_call_us(fn, args.calls, device))
            gems.enable()
            mine.append(per_call_us(fn, args.calls, device))
        a, g = statistics.median(aten), statistics.median(mine)
        print(f"{name:<12}{a:>10.2f}{g:>10.2f}{g / a:>8.2f}")
    gems.disable()


if __name__ == "__main__":
    main()
