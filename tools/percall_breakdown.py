"""Where a small gems call spends its host time, piece by piece (run on the device machine).

    python tools/percall_breakdown.py [--numel 4096]

Each line gives two numbers in microseconds per call, each the best of 5 rounds: "back to back" is
3000 calls with one synchronize at the end (what a user sees: host or GPU, whichever is slower);
"host" is the time to issue 200 calls, before the synchronize (the host's share alone: 200 launches
fit in the GPU's queue). The cProfile table after them shows the Python functions of one gems call.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time

import torch

import gems
from gems.runtime import launch


def _per_call(fn, sync, calls=3000, host_calls=200, rounds=5):
    """(back-to-back us per call, host-only us per call), best of ``rounds``."""
    fn()
    sync()
    back_to_back = host = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        back_to_back = min(back_to_back, (time.perf_counter() - start) / calls * 1e6)
        start = time.perf_counter()
        for _ in range(host_calls):
            fn()
        host = min(host, (time.perf_counter() - start) / host_calls * 1e6)
        sync()
    return back_to_back, host


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--numel", type=int, default=4096)
    args = parser.parse_args()
    backend = gems.vendor()
    device = backend.device
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    x = torch.randn(args.numel, device=device)
    rows = [("aten abs", lambda: torch.abs(x)),
            ("torch.empty_like", lambda: torch.empty_like(x))]
    lib = torch.library.Library("aten", "IMPL")
    lib.impl("abs", lambda keyset, t: torch.empty_like(t), backend.dispatch_key, with_keyset=True)
    rows.append(("registered impl, empty_like only", lambda: torch.abs(x)))
    results = [(name, _per_call(fn, sync)) for name, fn in rows]
    lib._destroy()

    from gems.ops.pointwise.abs import abs_op

    gems.enable()
    results.append(("gems torch.abs", _per_call(lambda: torch.abs(x), sync)))
    results.append(("abs_op(x), no dispatcher", _per_call(lambda: abs_op(x), sync)))
    plan = abs_op._fast_plans[x.dtype]
    launcher = plan[3]
    out = torch.empty_like(x)
    from gems.codegen import pointwise

    programs, block, warps = pointwise._flat_config(x.numel(), x.element_size())
    grid = (programs,)
    kernel_args = (x, out, x.numel(), plan[1], plan[2], False, block)
    results.append(("launcher(...) only", _per_call(lambda: launcher(grid, *kernel_args, num_warps=warps), sync)))
    results.append(("launcher.flat(...) only", _per_call(lambda: launcher.flat(programs, warps, *kernel_args), sync)))
    if launcher.fast:  # compiled kernels only (not the interpreter)
        prepare = launcher._prepare
        results.append(("launcher prepare (key, pointers) only", _per_call(lambda: prepare(*kernel_args), sync)))
        import triton

        print("launch hooks:", triton.knobs.runtime.launch_enter_hook, triton.knobs.runtime.launch_exit_hook)
        launch_fn, head, _ = next(iter(launcher._compiled.values()))
        stream = launcher._stream(launcher._device())
        _, pointer_args = prepare(*kernel_args)
        results.append(("C launch, tensors", _per_call(lambda: launch_fn(grid[0], 1, 1, stream, *head, *kernel_args),
                                                        sync)))
        results.append(("C launch, data pointers", _per_call(
            lambda: launch_fn(grid[0], 1, 1, stream, *head, *pointer_args), sync)))
        results.append(("C launch, empty grid (no driver call)", _per_call(
            lambda: launch_fn(0, 1, 1, stream, *head, *pointer_args), sync)))
        results.append(("stream(device()) only", _per_call(lambda: launcher._stream(launcher._device()), sync)))
    original = launch.Launcher._launch
    launch.Launcher._launch = lambda self, *a: None
    results.append(("gems torch.abs, launch stubbed", _per_call(lambda: torch.abs(x), sync)))
    results.append(("abs_op(x), launch stubbed", _per_call(lambda: abs_op(x), sync)))
    launch.Launcher._launch = original
    print(f"{'':<40}{'back to back':>14}{'host':>10}")
    for name, (back_to_back, host) in results:
        print(f"{name:<40}{back_to_back:11.2f} us{host:8.2f} us")
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(3000):
        torch.abs(x)
    profile.disable()
    pstats.Stats(profile).sort_stats("tottime").print_stats(18)


if __name__ == "__main__":
    main()
