"""GPU variants bench for argmax/argmin over the last dim (issue 15's last reduction target), run by
tools/gpu_argperf.sh; CUDA only, not a test. Every variant is the shipped kernel (arg_reduce._arg_kernel)
called through gems' own argmax/argmin functions, its plan changed in place:

  k16         the finish _first_by_key16 (KEY16: fp16/bf16 read as int16, 16-bit order keys packed with
              the position, one int32 max/min; the library's default for fp16/bf16)
  pair        _first_by_pairs (PAIRS: fp32 halvings that carry positions, then one packed int64 max/min)
  tile        _first_of_tile (main at 4476ff4: fp32 halving to the best value, then its first position:
              two cross-warp reductions; the library's default for fp32)
  w<N>        num_warps (the vendor's plan: 8)
  r2          2 rows per program (BLOCK_M 2, one 4096 tile per row)
  h<N>        HALVES of the fp32 finish (default 3 for 16-bit loads, 2 for fp32)

Each variant is first checked against ATen on rows with ties, NaNs of both signs, -0.0/+0.0 and infs (a
wrong one prints WRONG and is not timed), then timed REPS times interleaved with ATen and a copy of the same
bytes (do_bench, L2 flushed), so the spread shows the noise. Columns: median us, % of the copy ceiling
(input bytes read + output written, against a copy's read + write of the input), min-max % over the reps,
ATen time / variant time. Environment: ARGPERF_REPS (default 3), ARGPERF_SECONDS (stop starting new work
after this many seconds; default 60).
"""

import os
import sys
import time

import torch
from triton.testing import do_bench

DEADLINE = time.time() + float(os.environ.get("ARGPERF_SECONDS", "60"))
REPS = int(os.environ.get("ARGPERF_REPS", "3"))
ROWS, COLS = 32768, 4096
MID = (32, 4096, 1024)
DEVICE = "cuda"  # tools/argperf_bench.py's logic can be tried on the interpreter with smaller ROWS and "cpu"
# (name, KEY16, PAIRS, num_warps, rows per program, HALVES or None for the plan's). Few, because each is a
# compile (about a second): argmax takes all, argmin the first three (the three finishes at the vendor's
# plan); fp32, where KEY16 changes nothing, the tile and pair ones.
VARIANTS = (("k16 w8", True, False, 8, 1, None), ("tile w8", False, False, 8, 1, None),
            ("pair w8", False, True, 8, 1, None), ("tile w4", False, False, 4, 1, None),
            ("k16 w16", True, False, 16, 1, None), ("tile w16", False, False, 16, 1, None),
            ("pair w16", False, True, 16, 1, None), ("tile r2w8", False, False, 8, 2, None))
_COLS, _BLOCK_M, _HALVES = 16, 18, 21  # positions in a Launch's args (arg_reduce._launches)


def tricky(dtype, shape=(2048, COLS)):
    """Rows with ties, NaNs of both signs, -0.0/+0.0, infs, all -inf, all +inf."""
    x = torch.randint(-8, 8, shape, device=DEVICE).to(dtype)
    x[1::9, 100] = float("nan")
    x[1::9, 3000] = -float("nan")
    x[2::9] = float("-inf")
    x[3::9] = 0.0
    x[3::18, 5] = -0.0
    x[4::9, 2000] = float("inf")
    x[5::9] = float("inf")
    x[6::9, 4095] = float("nan")
    x[7::9, ::3] = -0.0
    return x


def set_variant(ar, key16, pairs, warps, rows, halves):
    """Plan the next calls with this variant: KEY16, PAIRS, then warps / rows / HALVES patched into the plans."""
    ar.KEY16, ar.PAIRS = key16, pairs
    ar._plans.clear()
    ar._plans.patch = (warps, rows, halves)


def patched_plans(ar):
    """Wrap arg_reduce's plan cache so that each new plan takes the variant's launch parameters."""
    put = ar._plans.put

    def put_patched(key, plan):
        warps, rows, halves = getattr(ar._plans, "patch", (None, 1, None))
        launches = []
        for launch in plan.launches:
            args = list(launch.args)
            grid = launch.grid
            if rows != 1 and not args[_COLS]:  # rows layout: args[0] outputs, BLOCK_M per program
                args[_BLOCK_M] = rows
                grid = ((args[0] + rows - 1) // rows, *grid[1:])
            if halves is not None:
                args[_HALVES] = halves
            launches.append(launch._replace(grid=grid, args=tuple(args), num_warps=warps or launch.num_warps))
        return put(key, plan._replace(launches=tuple(launches)))
    ar._plans.put = put_patched


def bench(fn):
    return do_bench(fn, warmup=5, rep=25, return_mode="median") * 1e3  # us


def main():
    sys.path.insert(0, ".")
    import gems  # noqa: F401 (selects the vendor from GEMS_VENDOR; registers nothing)
    from gems.ops.reduction import arg_reduce as ar
    from gems.ops.reduction import argmax, argmin

    patched_plans(ar)
    fns = {"argmax": (argmax.argmax, torch.argmax), "argmin": (argmin.argmin, torch.argmin)}
    for dtype in (torch.bfloat16, torch.float16, torch.float32):  # the one below target first
        torch.manual_seed(0)
        x = torch.randn(ROWS, COLS, device=DEVICE, dtype=dtype)
        y = torch.empty_like(x)
        moved = x.numel() * x.element_size() + ROWS * 8
        ceiling = 2 * x.numel() * x.element_size()
        check = tricky(dtype)
        print(f"== {str(dtype)[6:]} {ROWS}x{COLS} dim -1: variant, median us, % copy, min-max %, ATen/variant")
        for op, (mine, theirs) in fns.items():
            variants = [v for v in VARIANTS if dtype != torch.float32 or not v[1]]
            variants = variants if op == "argmax" else variants[:3 if dtype != torch.float32 else 2]
            good = []
            for name, *v in variants:
                set_variant(ar, *v)
                if not torch.equal(mine(check, -1), theirs(check, -1)) or not torch.equal(mine(x, -1), theirs(x, -1)):
                    print(f"  {op} {name}: WRONG (differs from ATen), not timed")
                    continue
                good.append((name, v))
            times = {name: [] for name, _ in good}
            times["aten"], times["copy"] = [], []
            for _ in range(REPS):
                if time.time() > DEADLINE:
                    break
                times["copy"].append(bench(lambda x=x, y=y: y.copy_(x)))
                times["aten"].append(bench(lambda x=x, f=theirs: f(x, -1)))
                for name, v in good:
                    set_variant(ar, *v)
                    mine(x, -1)  # plan outside the timing
                    times[name].append(bench(lambda x=x, f=mine: f(x, -1)))
            if not times["copy"]:
                print("  (time limit reached)")
                break
            copy_us = sorted(times["copy"])[len(times["copy"]) // 2]
            aten_us = sorted(times["aten"])[len(times["aten"]) // 2]
            for name in ["aten"] + [n for n, _ in good]:
                t = sorted(times[name])
                if not t:
                    continue
                pct = [moved / u / (ceiling / copy_us) * 100 for u in (t[len(t) // 2], t[-1], t[0])]
                print(f"  {op:<7}{name:<10}{t[len(t) // 2]:8.1f}{pct[0]:7.1f}  {pct[1]:5.1f}-{pct[2]:5.1f}"
                      f"{aten_us / t[len(t) // 2]:7.2f}x")
    set_variant(ar, True, False, None, 1, None)
    for dtype in (torch.float16, torch.bfloat16):  # the middle dim: the loop path, which KEY16 leaves alone
        if time.time() > DEADLINE:
            break
        xm = torch.randn(*MID, device=DEVICE, dtype=dtype)
        ok = torch.equal(argmax.argmax(xm, 1), torch.argmax(xm, 1))
        t_g, t_a = bench(lambda xm=xm: argmax.argmax(xm, 1)), bench(lambda xm=xm: torch.argmax(xm, 1))
        print(f"== {str(dtype)[6:]} {MID} dim 1 argmax (default plan): gems {t_g:.1f} us, ATen {t_a:.1f} us"
              f"{'' if ok else '  WRONG'}")


if __name__ == "__main__":
    main()
