"""Per-call host time of small gems calls against ATen's, and where it goes (run on the device machine).

    python tools/percall_breakdown.py [--numel 4096]

Each line gives two numbers in microseconds per call, each the median of 7 rounds: "back to back" is
2000 calls with one synchronize at the end (what a user sees: host or GPU, whichever is slower);
"host" is the time to issue 200 calls, before the synchronize (the host's share alone: 200 launches
fit in the GPU's queue). Rows: ATen; gems served natively (warm signature, the C++ replay); gems with
the native replay turned off (the Python path behind the same C++ kernel); the building blocks.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

import gems
from gems import native


def _per_call(fn, sync, calls=2000, host_calls=200, rounds=7):
    """(back-to-back us per call, host-only us per call), medians of ``rounds``."""
    for _ in range(20):
        fn()
    sync()
    back_to_back, host = [], []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        back_to_back.append((time.perf_counter() - start) / calls * 1e6)
        start = time.perf_counter()
        for _ in range(host_calls):
            fn()
        host.append((time.perf_counter() - start) / host_calls * 1e6)
        sync()
    return statistics.median(back_to_back), statistics.median(host)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--numel", type=int, default=4096)
    args = parser.parse_args()
    device = gems.vendor().device
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    x, y = torch.randn(args.numel, device=device), torch.randn(args.numel, device=device)
    calls = {"abs": lambda: torch.abs(x), "add": lambda: torch.add(x, y), "mul scalar": lambda: torch.mul(x, 2.0),
             "add_ (in-place)": lambda: x.add_(y, alpha=0)}
    results = [("torch.empty_like", _per_call(lambda: torch.empty_like(x), sync))]
    for name, fn in calls.items():
        results.append((f"aten {name}", _per_call(fn, sync)))
    gems.enable()
    status = gems.native_status()
    for name, fn in calls.items():
        results.append((f"gems {name}, native", _per_call(fn, sync)))
    if status["active"]:
        native._ext.set_enabled(False)
        for name, fn in calls.items():
            results.append((f"gems {name}, python path", _per_call(fn, sync)))
        native._ext.set_enabled(True)
    gems.disable()
    for name, fn in calls.items():
        results.append((f"aten {name} (again)", _per_call(fn, sync)))
    versions = f"torch {torch.__version__}, triton {__import__('triton').__version__}"
    print(f"device: {torch.cuda.get_device_name() if device == 'cuda' else device}; {versions}; numel {args.numel}")
    print(f"native layer: {status}")
    print(f"{'':<34}{'back to back':>14}{'host':>10}")
    for name, (back_to_back, host) in results:
        print(f"{name:<34}{back_to_back:11.2f} us{host:8.2f} us")


if __name__ == "__main__":
    main()
