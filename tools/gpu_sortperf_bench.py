"""Issue #15 (sort/topk speed) on the GPU: ATen against gems at 4096 rows of 1024, and the kernel variants
a follow-up has to choose between, each checked against ATen's stable sort and timed in the same run.

    python tools/gpu_sortperf_bench.py --warm 6      # compile every case into Triton's cache, 6 processes
    python tools/gpu_sortperf_bench.py [--budget-s 70]
    GEMS_VENDOR=interpreter python tools/gpu_sortperf_bench.py --cpu-smoke   # every variant checked on CPU

Timings: triton.testing.do_bench (L2 flushed before each call), median ms. Rows:
  e2e      torch.sort / torch.topk with gems enabled against ATen (what gems-perf measures), and the host
           time per call of both (200 calls back to back, no flush), to rule host overhead in or out.
  floor    a copy kernel with the same grid that loads the rows and writes values and int64 indices
           (no sort): the memory floor of one-program-per-row.
  cur      gems' own tile kernel (bitonic._sort_tile_kernel) launched directly with a chosen num_warps (w)
           and rows per program (m); REG_BITS follows w as in bitonic._register_bits. The default path
           today is w2 m1 for 1024 lanes.
  minmax   cur's network with min/max compare-exchanges (fewer instructions where the side is per register).
  loop     cur's network with its full stages as a run-time loop: small code (the unrolled 1024-lane network
           is ~44 KB of sm_90 code: does it thrash the instruction caches?).
  loopB    loop with no register permutation (REG_BITS=0): the top-k halving steps then drop register dims,
           so each step halves every thread's work (with cur's layout they drop lane dims: no saving).
  tlsort   Triton's tl.sort / tl.topk on the same packed int32 keys (16-bit dtypes).
  maxk     top-k as k rounds of "max of the packed keys, then remove it" (k <= 16 candidates).
Every variant's output is compared with ATen's stable sort (values and indices, first k for top-k):
'ok' or 'WRONG'. Variants run in order of importance until --budget-s of wall time has passed.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's gems

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton.testing import do_bench  # noqa: E402

import gems  # noqa: E402
from gems.ops.sorting import bitonic  # noqa: E402

ROWS, COLS = 4096, 1024


@triton.jit
def _copy_floor_kernel(x_ptr, v_ptr, i_ptr, N: tl.constexpr, BLOCK_M: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, N)
    at = rows[:, None] * N + cols[None, :]
    x = tl.load(x_ptr + at)
    tl.store(v_ptr + at, x)
    tl.store(i_ptr + at, tl.broadcast_to(cols[None, :], [BLOCK_M, N]).to(tl.int64))


@triton.jit
def _packed(x_ptr, BLOCK_M: tl.constexpr, N: tl.constexpr, DESCENDING: tl.constexpr):
    """Packed int32 keys (16-bit value key << 16 | 0xFFFF - index) of BLOCK_M full rows, as bitonic.py makes them."""
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :])
    valid = tl.full([BLOCK_M, N], 1, tl.int1)
    key = bitonic._keys(x, valid, DESCENDING, False, True)
    return (key.to(tl.int32) << 16) | (0xFFFF - tl.broadcast_to(cols[None, :], [BLOCK_M, N])), rows


@triton.jit
def _write(x_ptr, v_ptr, i_ptr, k, rows, N: tl.constexpr, K: tl.constexpr):
    i = (0xFFFF - (k & 0xFFFF)).to(tl.int64)
    offs = tl.arange(0, K)
    v = tl.load(x_ptr + rows[:, None] * N + i)
    tl.store(v_ptr + rows[:, None] * K + offs[None, :], v)
    tl.store(i_ptr + rows[:, None] * K + offs[None, :], i)


@triton.jit
def _tl_sort_kernel(x_ptr, v_ptr, i_ptr, N: tl.constexpr, K: tl.constexpr, BLOCK_M: tl.constexpr,
                    DESCENDING: tl.constexpr):
    k, rows = _packed(x_ptr, BLOCK_M, N, DESCENDING)
    if K == N:
        k = tl.sort(k, dim=1, descending=True)
    else:
        k = tl.topk(k, K, dim=1)
    _write(x_ptr, v_ptr, i_ptr, k, rows, N, K)


@triton.jit
def _max_k_kernel(x_ptr, v_ptr, i_ptr, N: tl.constexpr, K: tl.constexpr, BLOCK_M: tl.constexpr,
                  DESCENDING: tl.constexpr):
    k, rows = _packed(x_ptr, BLOCK_M, N, DESCENDING)
    cols = tl.arange(0, K)
    out = tl.full([BLOCK_M, K], 0, tl.int32)
    for r in tl.static_range(K):
        m = tl.max(k, axis=1)
        out = tl.where(cols[None, :] == r, m[:, None], out)
        k = tl.where(k == m[:, None], -2147483648, k)
    _write(x_ptr, v_ptr, i_ptr, out, rows, N, K)


@triton.jit
def _exchange_mm(k, flip, N_DIMS: tl.constexpr, J: tl.constexpr):
    """bitonic._exchange for unique packed keys as min/max: the lane on side 1 of a largest-last run keeps
    the larger. Where the side is fixed per register the select folds away (one IMNMX per key instead of
    a compare and a select); sm_90 code for a 1024-lane fp16 row at 2 warps: 2512 instructions, not 2776."""
    other = bitonic._partner(k, N_DIMS, J)
    return tl.where((bitonic._side(N_DIMS, J) ^ flip) == 1, tl.maximum(k, other), tl.minimum(k, other))


@triton.jit
def _merge_mm(k, flip, N_DIMS: tl.constexpr, STAGE: tl.constexpr):
    for s in tl.static_range(STAGE):
        k = _exchange_mm(k, flip, N_DIMS, STAGE - 1 - s)
    return k


@triton.jit
def _top_mm(k, N_DIMS: tl.constexpr, LOG_N: tl.constexpr, LOG_K: tl.constexpr):
    """bitonic.bitonic_top (packed keys only) on _exchange_mm."""
    for stage in tl.static_range(1, LOG_K + 1):
        if stage < LOG_N:
            k = _merge_mm(k, bitonic._side(N_DIMS, stage), N_DIMS, stage)
        else:
            k = _merge_mm(k, 1, N_DIMS, stage)
    for step in tl.static_range(LOG_K + 1, LOG_N + 1):
        k = tl.reduce(k, N_DIMS - (step - LOG_K) - LOG_K, tl.standard._elementwise_max)
        if step < LOG_N:
            k = _merge_mm(k, bitonic._side(N_DIMS - (step - LOG_K), LOG_K), N_DIMS - (step - LOG_K), LOG_K)
        else:
            k = _merge_mm(k, 1, N_DIMS - (step - LOG_K), LOG_K)
    return k


@triton.jit
def _mm_kernel(x_ptr, v_ptr, i_ptr, N: tl.constexpr, K: tl.constexpr, BLOCK_M: tl.constexpr,
               DESCENDING: tl.constexpr, LOG_M: tl.constexpr, LOG_N: tl.constexpr, LOG_K: tl.constexpr,
               REG_BITS: tl.constexpr):
    """The current tile kernel's network (hypercube with REG_BITS register dims innermost) on min/max."""
    k, rows = _packed(x_ptr, BLOCK_M, N, DESCENDING)
    k = bitonic._cube(k, BLOCK_M, N, REG_BITS, LOG_M + LOG_N)
    k = _top_mm(k, LOG_M + LOG_N, LOG_N, LOG_K)
    _write(x_ptr, v_ptr, i_ptr, tl.reshape(k, [BLOCK_M, K]), rows, N, K)


@triton.jit
def _loop_top(k, h, N_DIMS: tl.constexpr, LOG_N: tl.constexpr, LOG_K: tl.constexpr):
    """bitonic_top (packed keys) with the first LOG_K stages as a run-time loop: one copy of the code per
    exchange dim instead of one per (stage, dim), so the kernel's code stays small (the unrolled network is
    about 44 KB of sm_90 code for 1024 lanes, which may not stay in the instruction caches). ``h`` holds each
    lane's hypercube index (bit J = its side along dim J), in k's layout."""
    for stage in tl.range(1, LOG_K + 1, loop_unroll_factor=1):
        flip = tl.where(stage < LOG_N, (h >> stage) & 1, 1)
        for t in tl.static_range(LOG_K):
            if LOG_K - 1 - t < stage:
                k = bitonic._exchange(k, k, flip, N_DIMS, LOG_K - 1 - t, False)[0]
    for step in tl.static_range(LOG_K + 1, LOG_N + 1):
        k = tl.reduce(k, N_DIMS - (step - LOG_K) - LOG_K, tl.standard._elementwise_max)
        if step < LOG_N:
            k = bitonic._merge(k, k, bitonic._side(N_DIMS - (step - LOG_K), LOG_K), N_DIMS - (step - LOG_K), LOG_K,
                               False)[0]
        else:
            k = bitonic._merge(k, k, 1, N_DIMS - (step - LOG_K), LOG_K, False)[0]
    return k


@triton.jit
def _loop_kernel(x_ptr, v_ptr, i_ptr, N: tl.constexpr, K: tl.constexpr, BLOCK_M: tl.constexpr,
                 DESCENDING: tl.constexpr, LOG_M: tl.constexpr, LOG_N: tl.constexpr, LOG_K: tl.constexpr,
                 REG_BITS: tl.constexpr):
    """The tile kernel's network with its full stages as a run-time loop (_loop_top)."""
    k, rows = _packed(x_ptr, BLOCK_M, N, DESCENDING)
    # Hypercube index of each lane after _cube: row * N + (low index bits) * 2^REG_BITS + (top index bits).
    p = tl.arange(0, N)
    h = (p % (N >> REG_BITS)) * (1 << REG_BITS) + p // (N >> REG_BITS)
    h = tl.arange(0, BLOCK_M)[:, None] * N + h[None, :]
    k = bitonic._cube(k, BLOCK_M, N, REG_BITS, LOG_M + LOG_N)
    h = bitonic._cube(h, BLOCK_M, N, REG_BITS, LOG_M + LOG_N)
    k = _loop_top(k, h, LOG_M + LOG_N, LOG_N, LOG_K)
    _write(x_ptr, v_ptr, i_ptr, tl.reshape(k, [BLOCK_M, K]), rows, N, K)


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


def _current(x, k, descending, warps, block_m):
    n = x.shape[1]
    log_n = bitonic._log2(n)
    log_k = bitonic._log2(k)
    v = torch.empty((x.shape[0], k), dtype=x.dtype, device=x.device)
    i = torch.empty((x.shape[0], k), dtype=torch.int64, device=x.device)
    xv, vv, iv = x.view(x.shape[0], n, 1), v.view(x.shape[0], k, 1), i.view(x.shape[0], k, 1)
    strides = (*xv.stride(), *vv.stride(), *iv.stride())

    def run():
        bitonic._tile((x.shape[0] // block_m, 1), xv, vv, iv, iv, iv, x.shape[0], 1, n, k, 0, *strides,
                      descending, False, True, False, block_m, bitonic._log2(block_m), log_n, log_k,
                      bitonic._register_bits(log_n, warps), num_warps=warps)
    return run, v, i


def _simple(kernel, x, k, descending, warps, block_m):
    v = torch.empty((x.shape[0], k), dtype=x.dtype, device=x.device)
    i = torch.empty((x.shape[0], k), dtype=torch.int64, device=x.device)

    def run():
        kernel[(x.shape[0] // block_m,)](x, v, i, x.shape[1], k, block_m, descending, num_warps=warps)
    return run, v, i


def _min_max(x, k, descending, warps, block_m):
    v = torch.empty((x.shape[0], k), dtype=x.dtype, device=x.device)
    i = torch.empty((x.shape[0], k), dtype=torch.int64, device=x.device)
    log_n = bitonic._log2(x.shape[1])

    def run():
        _mm_kernel[(x.shape[0] // block_m,)](x, v, i, x.shape[1], k, block_m, descending, bitonic._log2(block_m),
                                             log_n, bitonic._log2(k), bitonic._register_bits(log_n, warps),
                                             num_warps=warps)
    return run, v, i


def _variants(cols=COLS):
    """(name, make, k, warps, rows per program), most important first. "cur ... w2 m1" is today's default
    for 1024 lanes (the same compiled kernel as the e2e rows)."""
    variants = []
    for k, configs in ((cols, ((2, 1), (1, 1), (4, 1), (4, 2))), (64, ((2, 1), (1, 1), (4, 1))), (8, ((2, 1), (4, 1)))):
        variants += [(f"cur k={k} w{w} m{m}", _current, k, w, m) for w, m in configs]
    for k, configs in ((cols, (2, 4, 8)), (64, (2, 4)), (8, (2,))):
        variants += [(f"loop k={k} w{w} m1", _looped, k, w, 1) for w in configs]
    variants += [(f"loop k={k} w4 m2", _looped, k, 4, 2) for k in (cols, 64)]
    for k, configs in ((64, (2, 4, 8)), (8, (2, 4))):
        variants += [(f"loopB k={k} w{w} m1", lambda *a: _looped(*a, reg_bits=0), k, w, 1) for w in configs]
    for k, warps in ((8, 2), (8, 4), (16, 4)):
        variants.append((f"maxk k={k} w{warps} m1", lambda *a: _simple(_max_k_kernel, *a), k, warps, 1))
    for k, configs in ((cols, ((2, 1), (4, 1))), (64, ((2, 1), (4, 1))), (8, ((2, 1),))):
        variants += [(f"minmax k={k} w{w} m{m}", _min_max, k, w, m) for w, m in configs]
    for k in (cols, 64):
        variants.append((f"tlsort k={k} w4 m1", lambda *a: _simple(_tl_sort_kernel, *a), k, 4, 1))
    return variants


def _e2e_cases():
    """(name, dtype, k): what gems-perf times, torch.sort (ascending) and torch.topk (largest)."""
    cases = [("sort", dtype, COLS) for dtype in (torch.float16, torch.bfloat16, torch.float32)]
    cases += [("topk", dtype, 64) for dtype in (torch.float16, torch.bfloat16, torch.float32)]
    return cases + [("topk", torch.float16, 8)]


def _e2e_call(name, x, k):
    return (lambda: torch.sort(x, -1)) if name == "sort" else (lambda: torch.topk(x, k, -1))


def _warm(index):
    """Run case ``index`` once (compiles land in Triton's on-disk cache for the timing process)."""
    torch.manual_seed(0)
    cases = _e2e_cases()
    if index < len(cases):
        name, dtype, k = cases[index]
        x = torch.randn(ROWS, COLS, device="cuda").to(dtype)
        with gems.use_gems(include=["sort", "topk"]):
            _e2e_call(name, x, k)()
    else:
        name, make, k, warps, block_m = _variants()[index - len(cases)]
        x = torch.randn(ROWS, COLS, device="cuda").to(torch.float16)
        try:
            make(x, k, k != COLS, warps, block_m)[0]()
        except Exception:  # reported by the timing pass
            pass
    torch.cuda.synchronize()
    return index


def _looped(x, k, descending, warps, block_m, reg_bits=None):
    v = torch.empty((x.shape[0], k), dtype=x.dtype, device=x.device)
    i = torch.empty((x.shape[0], k), dtype=torch.int64, device=x.device)
    log_n = bitonic._log2(x.shape[1])

    def run():
        _loop_kernel[(x.shape[0] // block_m,)](x, v, i, x.shape[1], k, block_m, descending, bitonic._log2(block_m),
                                               log_n, bitonic._log2(k),
                                               bitonic._register_bits(log_n, warps) if reg_bits is None else reg_bits,
                                               num_warps=warps)
    return run, v, i


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
    for name, dtype, k in _e2e_cases():
        x = torch.randn(ROWS, COLS, device="cuda").to(dtype)
        call = _e2e_call(name, x, k)
        aten_ms, aten_us = _bench(call), _host_us(call)
        with gems.use_gems(include=["sort", "topk"]):
            gems_ms, gems_us = _bench(call), _host_us(call)
            gems.reset_counts()
            v, i = call()
            counts = gems.call_counts()
        served = "gems" if sum(counts["gems"].values()) and not counts["fallback"] else f"NOT GEMS {counts}"
        print(f"e2e {name} k={k:<20}{str(dtype)[6:]:<10}{gems_ms:9.4f}{aten_ms:9.4f}{aten_ms / gems_ms:8.2f}  "
              f"{_check(x, k, name != 'sort', v, i)} {served}  host us/call gems {gems_us:.1f} aten {aten_us:.1f}",
              flush=True)

    # --- kernel variants, fp16: ascending for sort, largest first for top-k
    x = torch.randn(ROWS, COLS, device="cuda").to(torch.float16)
    aten = {k: _bench(lambda k=k: torch.topk(x, k, -1)) for k in (64, 16, 8)}
    aten[COLS] = _bench(lambda: torch.sort(x, -1))
    v = torch.empty_like(x)
    i = torch.empty(x.shape, dtype=torch.int64, device="cuda")
    ms = _bench(lambda: _copy_floor_kernel[(ROWS,)](x, v, i, COLS, 1, num_warps=2))
    print(f"{'floor copy w2 m1':<30}{'float16':<10}{ms:9.4f}{aten[COLS]:9.4f}{aten[COLS] / ms:8.2f}", flush=True)
    for name, make, k, warps, block_m in _variants():
        if time.time() - t0 > args.budget_s:
            print(f"{name:<30}skipped: over the {args.budget_s:.0f} s budget")
            continue
        descending = k != COLS
        try:
            run, v, i = make(x, k, descending, warps, block_m)
            run()
            check = _check(x, k, descending, v, i)
            ms = _bench(run)
        except Exception as exc:  # a variant that does not compile is a result too
            print(f"{name:<30}{'float16':<10}  failed: {type(exc).__name__}: {str(exc)[:120]}")
            continue
        print(f"{name:<30}{'float16':<10}{ms:9.4f}{aten[k]:9.4f}{aten[k] / ms:8.2f}  {check}", flush=True)
    print(f"bench wall time {time.time() - t0:.0f} s")


def smoke():
    """Every variant once on 4 rows of 64, fp16, on the CPU (GEMS_VENDOR=interpreter): only the check."""
    x = torch.randn(4, 64).to(torch.float16)
    bad = 0
    for name, make, k, warps, block_m in _variants(64):
        descending = k != 64
        run, v, i = make(x, k, descending, warps, block_m)
        run()
        check = _check(x, k, descending, v, i)
        bad += check != "ok"
        print(f"{name:<30}{check}", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
