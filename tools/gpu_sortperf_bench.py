"""Issue #15 (sort/topk speed) on the GPU: ATen against gems at 4096 rows of 1024, and gems' tile kernel at a
few warps per program, each checked against ATen's stable sort and timed in the same run.

    python tools/gpu_sortperf_bench.py --warm 6      # compile every case into Triton's cache, 6 processes
    python tools/gpu_sortperf_bench.py [--budget-s 70]
    GEMS_VENDOR=interpreter python tools/gpu_sortperf_bench.py --cpu-smoke   # every variant checked on CPU

Timings: triton.testing.do_bench (L2 flushed before each call), median ms. Rows:
  e2e      torch.sort / torch.topk with gems enabled against ATen (what gems-perf measures), and the host
           time per call of both (200 calls back to back, no flush), to rule host overhead in or out;
           "short" rows: 65536 rows of 64 (16 rows per program).
  cur      gems' tile kernel (bitonic._sort_tile_kernel) launched directly at num_warps w, one row per
           program; REG_BITS follows w as in bitonic._register_bits. The default is w1 for 1024 lanes
           (bitonic._warps).
Every row's output is compared with ATen's stable sort (values and indices, first k for top-k): 'ok' or
'WRONG'. Variants run in order until --budget-s of wall time has passed.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's gems

import torch  # noqa: E402
from triton.testing import do_bench  # noqa: E402

import gems  # noqa: E402
from gems.ops.sorting import bitonic  # noqa: E402

ROWS, COLS = 4096, 1024


def _bench(fn):
    return do_bench(fn, warmup=5, rep=40, return_mode="median")


def _host_us(fn, calls=200):
    fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / calls * 1e6


def _check(x, k, descending, values, indices):
    ref_v, ref_i = torch.sort(x, dim=-1, descending=descending, stable=True)
    good = torch.equal(indices, ref_i[:, :k]) and torch.equal(values, ref_v[:, :k])
    return "ok" if good else "WRONG"


def _current(x, k, descending, warps):
    n = x.shape[1]
    log_n = bitonic._log2(n)
    log_k = bitonic._log2(k)
    v = torch.empty((x.shape[0], k), dtype=x.dtype, device=x.device)
    i = torch.empty((x.shape[0], k), dtype=torch.int64, device=x.device)
    xv, vv, iv = x.view(x.shape[0], n, 1), v.view(x.shape[0], k, 1), i.view(x.shape[0], k, 1)
    strides = (*xv.stride(), *vv.stride(), *iv.stride())

    def run():
        bitonic._tile((x.shape[0], 1), xv, vv, iv, iv, iv, x.shape[0], 1, n, k, 0, *strides, descending, False,
                      x.dtype in bitonic.NARROW_DTYPES, False, 1, 0, log_n, log_k,
                      bitonic._register_bits(log_n, warps), num_warps=warps)
    return run, v, i


def _variants(cols=COLS):
    """(name, dtype, k, warps), most important first."""
    variants = [(f"cur k={cols} w{w}", torch.float16, cols, w) for w in (1, 2, 4)]
    variants += [(f"cur k={cols} w{w}", torch.float32, cols, w) for w in (1, 2)]
    variants += [(f"cur k=64 w{w}", torch.float16, 64, w) for w in (1, 2)]
    variants += [(f"cur k=64 w{w}", torch.float32, 64, w) for w in (1, 2)]
    return variants + [(f"cur k=8 w{w}", torch.float16, 8, w) for w in (1, 2)]


def _e2e_cases():
    """(name, dtype, rows, cols, k): what gems-perf times, torch.sort (ascending) and torch.topk (largest)."""
    cases = [("sort", dtype, ROWS, COLS, COLS) for dtype in (torch.float16, torch.bfloat16, torch.float32)]
    cases += [("topk", dtype, ROWS, COLS, 64) for dtype in (torch.float16, torch.bfloat16, torch.float32)]
    return cases + [("topk", torch.float16, ROWS, COLS, 8), ("sort", torch.float16, 65536, 64, 64)]


def _e2e_call(name, x, k):
    return (lambda: torch.sort(x, -1)) if name == "sort" else (lambda: torch.topk(x, k, -1))


def _warm(index):
    """Run case ``index`` once (compiles land in Triton's on-disk cache for the timing process)."""
    torch.manual_seed(0)
    cases = _e2e_cases()
    if index < len(cases):
        name, dtype, rows, cols, k = cases[index]
        x = torch.randn(rows, cols, device="cuda").to(dtype)
        with gems.use_gems(include=["sort", "topk"]):
            _e2e_call(name, x, k)()
    else:
        name, dtype, k, warps = _variants()[index - len(cases)]
        x = torch.randn(ROWS, COLS, device="cuda").to(dtype)
        try:
            _current(x, k, k != COLS, warps)[0]()
        except Exception:  # reported by the timing pass
            pass
    torch.cuda.synchronize()
    return index


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--budget-s", type=float, default=70.0, help="stop timing variants after this")
    parser.add_argument("--warm", type=int, default=0, metavar="PROCS",
                        help="only compile every case, in PROCS processes, into Triton's cache, then exit")
    parser.add_argument("--cpu-smoke", action="store_true",
                        help="check every variant once on 4 rows of 64 under the interpreter (no timing)")
    args = parser.parse_args(argv)
    if args.cpu_smoke:
        return smoke()
    t0 = time.time()
    if args.warm:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor
        with ProcessPoolExecutor(args.warm, mp_context=multiprocessing.get_context("spawn")) as pool:
            list(pool.map(_warm, range(len(_e2e_cases()) + len(_variants()))))
        print(f"compiled every case in {time.time() - t0:.0f} s")
        return 0
    torch.manual_seed(0)
    print(f"{'case':<30}{'dtype':<10}{'ms':>9}{'aten ms':>9}{'vs aten':>8}  check / host us per call")

    # --- end to end, as gems-perf measures it
    for name, dtype, rows, cols, k in _e2e_cases():
        x = torch.randn(rows, cols, device="cuda").to(dtype)
        call = _e2e_call(name, x, k)
        aten_ms, aten_us = _bench(call), _host_us(call)
        with gems.use_gems(include=["sort", "topk"]):
            gems_ms, gems_us = _bench(call), _host_us(call)
            gems.reset_counts()
            v, i = call()
            counts = gems.call_counts()
        served = "gems" if sum(counts["gems"].values()) and not counts["fallback"] else f"NOT GEMS {counts}"
        print(f"{f'e2e {name} {rows}x{cols} k={k}':<30}{str(dtype)[6:]:<10}{gems_ms:9.4f}{aten_ms:9.4f}"
              f"{aten_ms / gems_ms:8.2f}  {_check(x, k, name != 'sort', v, i)} {served}  "
              f"host us/call gems {gems_us:.1f} aten {aten_us:.1f}", flush=True)

    # --- the tile kernel at a few warps: ascending for sort, largest first for top-k
    inputs, aten = {}, {}
    for name, dtype, k, warps in _variants():
        if time.time() - t0 > args.budget_s:
            print(f"{name:<30}skipped: over the {args.budget_s:.0f} s budget")
            continue
        descending = k != COLS
        if dtype not in inputs:
            inputs[dtype] = torch.randn(ROWS, COLS, device="cuda").to(dtype)
        x = inputs[dtype]
        if (dtype, k) not in aten:
            aten[dtype, k] = _bench(_e2e_call("topk" if descending else "sort", x, k))
        try:
            run, v, i = _current(x, k, descending, warps)
            run()
            check = _check(x, k, descending, v, i)
            ms = _bench(run)
        except Exception as exc:  # a variant that does not compile is a result too
            print(f"{name:<30}{str(dtype)[6:]:<10}  failed: {type(exc).__name__}: {str(exc)[:120]}")
            continue
        print(f"{name:<30}{str(dtype)[6:]:<10}{ms:9.4f}{aten[dtype, k]:9.4f}{aten[dtype, k] / ms:8.2f}  {check}",
              flush=True)
    print(f"bench wall time {time.time() - t0:.0f} s")


def smoke():
    """Every variant once on 4 rows of 64 on the CPU (GEMS_VENDOR=interpreter): only the check."""
    bad = 0
    for name, dtype, k, warps in _variants(64):
        x = torch.randn(4, 64).to(dtype)
        run, v, i = _current(x, k, k != 64, warps)
        run()
        check = _check(x, k, k != 64, v, i)
        bad += check != "ok"
        print(f"{name:<30}{str(dtype)[6:]:<10}{check}", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
