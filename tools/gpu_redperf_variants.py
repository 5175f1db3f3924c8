"""GPU timing for issue 15's reduction targets (run by tools/gpu_redperf.sh; CUDA only, not a test).

One table per dtype (fp16, bf16) at 32768x4096 over the last dim and [32, 4096, 1024] over dim 1: the copy
ceiling measured in the same run, ATen, gems' current operators, and candidate row kernels that decided the
design of the last-dim ("rows") path (H100 at 4c36a94: the library took mode "halve" for max/min finishes;
fnan and pair, at most 1.5 points faster, run one Python call per element under the interpreter). The
candidates are written for exactly that layout (contiguous rows, the whole row in one tile, so no loop over K)
and check their own answers against ATen (NaN rows and ties included) before they are timed; a wrong one
prints WRONG and is not timed.

Candidate names: <op>/<mode>/r<rows per program>w<num_warps>[p<pipeline stages of a persistent loop>]
  arg modes  fnan:   value max with a NaN-propagating float max (max.NaN.f32), then the index as the
                     smallest position holding it or holding a NaN (a NaN max means the row has one)
             key:    order-key int32 max (planning.order_key of v + 0), then the smallest position of it
             pack:   one int64 max of (key << 32 | ~position), the current arg_reduce finish
             native: as fnan but compared in fp16/bf16 without the fp32 cast
             halve:  as fnan, the max taken as amax's halve mode (below)
  amax modes fnan, key, native (as above, value only); halve: NaN-propagating max of 8 adjacent elements
             by elementwise halving (interpreter-friendly), then one order-key int32 max of 1/8 of the tile
  aminmax    fnan (two reductions), pair (one tl.reduce of a (min, max) pair)
  var_mean   tworeg (mean, then the centred sum of squares, both from registers), shifted (one joint
             (S1, S2) reduction shifted by the row's first element, the current moments.py formula)
  sum, mean  plain
"""

import os
import sys
import time

import torch
import triton
import triton.language as tl
from triton.testing import do_bench

DEADLINE = time.time() + float(os.environ.get("REDPERF_SECONDS", "70"))
ROWS, COLS = 32768, 4096
MID = (32, 4096, 1024)


# --------------------------------------------------------------------------- candidate kernels


@triton.jit
def _max_nan(a, b):
    return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def _min_nan(a, b):
    return tl.minimum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def _add(a, b):
    return a + b


@triton.jit
def _imax(a, b):
    return tl.maximum(a, b)


@triton.jit
def _imin(a, b):
    return tl.minimum(a, b)


@triton.jit
def _pair_minmax(lo_a, hi_a, lo_b, hi_b):
    return (tl.minimum(lo_a, lo_b, propagate_nan=tl.PropagateNan.ALL),
            tl.maximum(hi_a, hi_b, propagate_nan=tl.PropagateNan.ALL))


@triton.jit
def _pair_add(a1, a2, b1, b2):
    return a1 + b1, a2 + b2


@triton.jit
def _key(v):
    bits = (v + 0.0).to(tl.int32, bitcast=True)
    key = bits ^ ((bits >> 31) & 0x7FFFFFFF)
    return tl.where(v != v, 0x7FFFFFFF, key)


@triton.jit
def _halve_max(x, R: tl.constexpr, WIDTH: tl.constexpr):
    a, b = tl.split(tl.reshape(x, [R, WIDTH // 2, 2]))
    return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def _tile(x_ptr, blk, M, N, R: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = blk * R + tl.arange(0, R)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows < M)[:, None] & (cols < N)[None, :]
    return rows, cols, mask


@triton.jit
def _row_block(x_ptr, o1_ptr, o2_ptr, blk, M, N, OP: tl.constexpr, MODE: tl.constexpr, R: tl.constexpr,
               BLOCK_N: tl.constexpr):
    rows, cols, mask = _tile(x_ptr, blk, M, N, R, BLOCK_N)
    ptrs = x_ptr + rows[:, None] * N + cols[None, :]
    rmask = rows < M
    if OP == 0:  # argmax
        raw = tl.load(ptrs, mask=mask, other=float("-inf"))
        if MODE == 3:
            v = raw
        else:
            v = raw.to(tl.float32)
        if MODE == 0 or MODE == 3 or MODE == 4:
            if MODE == 4:
                h = v
                for i in tl.static_range(3):
                    h = _halve_max(h, R, BLOCK_N >> i)
                k = tl.reduce(_key(h), 1, _imax)
                m = (k ^ ((k >> 31) & 0x7FFFFFFF)).to(tl.float32, bitcast=True)
            else:
                m = tl.reduce(v, 1, _max_nan)
            hit = ((v == m[:, None]) | (v != v)) & mask
            idx = tl.reduce(tl.where(hit, cols[None, :], BLOCK_N), 1, _imin)
        elif MODE == 1:
            key = _key(v)
            top = tl.reduce(key, 1, _imax)
            idx = tl.reduce(tl.where((key == top[:, None]) & mask, cols[None, :], BLOCK_N), 1, _imin)
        else:
            packed = (_key(v).to(tl.int64) << 32) | (0xFFFFFFFF - cols[None, :].to(tl.int64))
            idx = 0xFFFFFFFF - (tl.reduce(packed, 1, _imax) & 0xFFFFFFFF)
        tl.store(o1_ptr + rows, idx.to(tl.int64), mask=rmask)
    elif OP == 1:  # amax
        raw = tl.load(ptrs, mask=mask, other=float("-inf"))
        if MODE == 3:
            m = tl.reduce(raw, 1, _max_nan)
        elif MODE == 4:  # NaN-propagating max of adjacent 8 (in-thread, elementwise), then keys of 1/8 of them
            h = raw.to(tl.float32)
            for i in tl.static_range(3):
                h = _halve_max(h, R, BLOCK_N >> i)
            k = tl.reduce(_key(h), 1, _imax)
            m = (k ^ ((k >> 31) & 0x7FFFFFFF)).to(tl.float32, bitcast=True)
        elif MODE == 0:
            m = tl.reduce(raw.to(tl.float32), 1, _max_nan)
        else:
            k = tl.reduce(_key(raw.to(tl.float32)), 1, _imax)
            m = (k ^ ((k >> 31) & 0x7FFFFFFF)).to(tl.float32, bitcast=True)
        tl.store(o1_ptr + rows, m.to(o1_ptr.dtype.element_ty), mask=rmask)
    elif OP == 2:  # aminmax
        v = tl.load(ptrs, mask=mask, other=float("nan")).to(tl.float32)
        lo_in = tl.where(mask, v, float("inf"))
        hi_in = tl.where(mask, v, float("-inf"))
        if MODE == 0:
            lo = tl.reduce(lo_in, 1, _min_nan)
            hi = tl.reduce(hi_in, 1, _max_nan)
        else:
            lo, hi = tl.reduce((lo_in, hi_in), 1, _pair_minmax)
        tl.store(o1_ptr + rows, lo.to(o1_ptr.dtype.element_ty), mask=rmask)
        tl.store(o2_ptr + rows, hi.to(o2_ptr.dtype.element_ty), mask=rmask)
    elif OP == 3:  # var_mean, correction 1
        v = tl.load(ptrs, mask=mask, other=0).to(tl.float32)
        if MODE == 0:
            mean = tl.reduce(v, 1, _add) / N
            d = tl.where(mask, v - mean[:, None], 0.0)
            m2 = tl.reduce(d * d, 1, _add)
        else:
            first = tl.load(x_ptr + rows * N, mask=rmask, other=0).to(tl.float32)
            d = tl.where(mask, v - first[:, None], 0.0)
            s1, s2 = tl.reduce((d, d * d), 1, _pair_add)
            mean = first + s1 / N
            m2 = s2 - s1 * s1 / N
        tl.store(o1_ptr + rows, (m2 / (N - 1)).to(o1_ptr.dtype.element_ty), mask=rmask)
        tl.store(o2_ptr + rows, mean.to(o2_ptr.dtype.element_ty), mask=rmask)
    else:  # sum (OP 4), mean (OP 5)
        v = tl.load(ptrs, mask=mask, other=0).to(tl.float32)
        s = tl.reduce(v, 1, _add)
        if OP == 5:
            s = s / N
        tl.store(o1_ptr + rows, s.to(o1_ptr.dtype.element_ty), mask=rmask)


@triton.jit
def rows_kernel(x_ptr, o1_ptr, o2_ptr, M, N, OP: tl.constexpr, MODE: tl.constexpr, R: tl.constexpr,
                BLOCK_N: tl.constexpr, STAGES: tl.constexpr):
    """STAGES 0: one row block per program; else a persistent loop over row blocks, pipelined STAGES deep."""
    pid = tl.program_id(0)
    if STAGES == 0:
        _row_block(x_ptr, o1_ptr, o2_ptr, pid, M, N, OP, MODE, R, BLOCK_N)
    else:
        blocks = tl.cdiv(M, R)
        for blk in tl.range(pid, blocks, tl.num_programs(0), num_stages=STAGES):
            _row_block(x_ptr, o1_ptr, o2_ptr, blk, M, N, OP, MODE, R, BLOCK_N)


OPS = {"argmax": 0, "amax": 1, "aminmax": 2, "var_mean": 3, "sum": 4, "mean": 5}
MODES = {"fnan": 0, "key": 1, "pack": 2, "native": 3, "halve": 4, "pair": 1, "tworeg": 0, "shifted": 1, "plain": 0}
SMS = None


def candidate(op, mode, r, w, stages, x):
    m, n = x.shape
    o1 = torch.empty(m, device=x.device, dtype=torch.int64 if op == "argmax" else x.dtype)
    o2 = torch.empty(m, device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(m, r),) if stages == 0 else (min(triton.cdiv(m, r), SMS * max(1, 32 // w)),)

    def fn():
        rows_kernel[grid](x, o1, o2, m, n, OPS[op], MODES[mode], r, triton.next_power_of_2(n), stages,
                          num_warps=w)
        return (o1, o2) if op in ("aminmax", "var_mean") else o1
    return fn


def aten(op, x, dim):
    return {
        "argmax": lambda: torch.argmax(x, dim), "argmin": lambda: torch.argmin(x, dim),
        "max.dim": lambda: torch.max(x, dim), "amax": lambda: torch.amax(x, dim),
        "aminmax": lambda: torch.aminmax(x, dim=dim), "var_mean": lambda: torch.var_mean(x, dim),
        "sum": lambda: torch.sum(x, dim), "mean": lambda: torch.mean(x, dim),
    }[op]


def out_bytes(op, x, dim):
    n = x.numel() // x.shape[dim]
    per = {"argmax": 8, "argmin": 8, "max.dim": 8 + x.element_size(),
           "aminmax": 2 * x.element_size(), "var_mean": 2 * x.element_size()}.get(op, x.element_size())
    return n * per


def same(op, got, want):
    if op in ("argmax", "argmin"):
        return torch.equal(got, want)
    if op == "max.dim":
        return torch.equal(got[1], want[1]) and torch.equal(got[0], want[0])
    if op in ("aminmax", "var_mean"):
        return all(same("x", g, w) for g, w in zip(got, want))
    if op == "amax":
        return torch.equal(got, want) or torch.allclose(got, want, equal_nan=True, rtol=0, atol=0)
    return torch.allclose(got.float(), want.float(), rtol=2e-2, atol=1e-2, equal_nan=True)


def tricky(dtype, shape=(4096, COLS)):
    """Rows with ties, NaNs, -0.0/+0.0, infs, all -inf: the candidates' semantics check."""
    x = torch.randint(-8, 8, shape, device="cuda").to(dtype)
    x[1::7, 100] = float("nan")
    x[1::7, 3000] = float("nan")
    x[2::7] = float("-inf")
    x[3::7] = 0.0
    x[3::14, 5] = -0.0
    x[4::7, 2000] = float("inf")
    return x


def bench(fn):
    return do_bench(fn, warmup=10, rep=40, return_mode="median")


def main():
    global SMS
    SMS = torch.cuda.get_device_properties(0).multi_processor_count
    sys.path.insert(0, ".")
    import gems  # noqa: F401 (selects the vendor from GEMS_VENDOR)
    from gems.ops.reduction import amax, aminmax, argmax, argmin, mean, var_mean
    from gems.ops.reduction import max as gmax
    from gems.ops.reduction import sum as gsum

    gems_fns = {
        "argmax": lambda x, d: argmax.argmax(x, d), "argmin": lambda x, d: argmin.argmin(x, d),
        "max.dim": lambda x, d: gmax.SPECS[0].impls["max.dim"](x, d),
        "amax": lambda x, d: amax.amax(x, [d]), "aminmax": lambda x, d: aminmax.SPECS[0].impls["aminmax"](x, dim=d),
        "var_mean": lambda x, d: var_mean.SPECS[0].impls["var_mean.correction"](x, [d]),
        "sum": lambda x, d: gsum.sum_dim(x, [d]), "mean": lambda x, d: mean.mean_dim(x, [d]),
    }
    variants = os.environ.get("REDPERF_VARIANTS", "1") == "1"
    state = {}
    for dtype in (torch.float16, torch.bfloat16):  # the operators first: they are what the targets are about
        torch.manual_seed(0)
        x = torch.randn(ROWS, COLS, device="cuda", dtype=dtype)
        xm = torch.randn(*MID, device="cuda", dtype=dtype)
        y = torch.empty_like(x)
        t_copy = bench(lambda x=x, y=y: y.copy_(x))
        copy_bw = 2 * x.numel() * x.element_size() / t_copy / 1e6
        del y
        print(f"\n== {str(dtype)[6:]}  copy ceiling {copy_bw:.0f} GB/s ({t_copy * 1e3:.1f} us at {ROWS}x{COLS})")
        print(f"{'case':<34}{'us':>8}{'%copy':>7}{'vsATen':>8}  note")
        aten_ms = {}
        for inp, dim, label in ((x, 1, "last"), (xm, 1, "mid")):
            for op in ("sum", "mean", "amax", "argmax", "argmin", "max.dim", "aminmax", "var_mean"):
                a = aten(op, inp, dim)
                ta = row(f"aten {op} {label}", a, inp, dim, op, copy_bw)
                if label == "last":
                    aten_ms[op] = ta
                row(f"gems {op} {label}", lambda op=op, inp=inp, dim=dim: gems_fns[op](inp, dim), inp, dim, op,
                    copy_bw, ta, a())
        del xm
        state[dtype] = (x, copy_bw, aten_ms)
    if not variants:
        return
    for dtype, (x, copy_bw, aten_ms) in state.items():
        # Candidates: every mode at the current plan (1 row, 8 warps); plans for each op's first mode (fp16;
        # bf16 takes the current plan and the pipelined persistent one, and no native mode: bf16 max upcasts).
        print(f"\n== candidates {str(dtype)[6:]} (32768x4096, last dim; copy ceiling {copy_bw:.0f} GB/s)")
        plans = PLANS if dtype == torch.float16 else [PLANS[0], PLANS[3]]
        todo = [(op, mode, r, w, s) for op, modes in CANDIDATES for mode in modes
                for r, w, s in (plans if mode == modes[0] else plans[:1])
                if not (mode == "native" and dtype == torch.bfloat16)]
        prewarm(todo, x)
        for op, mode, r, w, s in todo:
            name = f"{op}/{mode}/r{r}w{w}" + (f"p{s}" if s else "")
            if time.time() > DEADLINE:
                print(f"{name:<34}   (skipped: time budget)")
                continue
            check = tricky(dtype) if op in ("argmax", "amax", "aminmax") else 100 + torch.randn_like(x[:4096])
            try:
                ok = same(op, candidate(op, mode, r, w, s, check)(), aten(op, check, 1)())
            except Exception as e:
                print(f"{name:<34}   FAILED {type(e).__name__}: {str(e).splitlines()[0][:120]}")
                continue
            if not ok:
                print(f"{name:<34}   WRONG on the check rows (NaN/ties/-0.0, or offset data)")
                continue
            row(name, candidate(op, mode, r, w, s, x), x, 1, op, copy_bw, aten_ms.get(op), aten(op, x, 1)())


def row(name, fn, inp, dim, op, copy_bw, aten_t=None, ref=None):
    """Time fn (after checking it against ref) and print a line; None when skipped or wrong."""
    if time.time() > DEADLINE:
        print(f"{name:<34}   (skipped: time budget)")
        return None
    try:
        got = fn()
        torch.cuda.synchronize()
    except Exception as e:  # a candidate that fails to compile is reported, not fatal
        print(f"{name:<34}   FAILED {type(e).__name__}: {str(e).splitlines()[0][:120]}")
        return None
    if ref is not None and not same(op, got, ref):
        print(f"{name:<34}   WRONG (differs from ATen)")
        return None
    t = bench(fn)
    pct = (inp.numel() * inp.element_size() + out_bytes(op, inp, dim)) / t / 1e6 / copy_bw * 100
    target = 90 if inp.dim() == 2 else 75
    note = "ok" if pct >= target else f"MISS (<{target})"
    rel = f"{aten_t / t:8.2f}" if aten_t else f"{'':8}"
    print(f"{name:<34}{t * 1e3:8.1f}{pct:7.1f}{rel}  {note}")
    return t


# (rows per program, num_warps, pipeline stages of a persistent loop; 0: one row block per program)
PLANS = [(1, 8, 0), (1, 4, 0), (2, 8, 0), (1, 8, 2), (1, 8, 3), (2, 8, 2)]
CANDIDATES = (("argmax", ("fnan", "key", "pack", "native", "halve")), ("amax", ("fnan", "key", "native", "halve")),
              ("var_mean", ("tworeg", "shifted")), ("aminmax", ("fnan", "pair")), ("mean", ("plain",)))


def prewarm(todo, x):
    """Compile the candidates in threads (ptxas runs outside the GIL); failures show up later, per row."""
    from concurrent.futures import ThreadPoolExecutor

    def one(c):
        try:
            candidate(*c, x)()
        except Exception:
            pass
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(one, todo))
    torch.cuda.synchronize()

if __name__ == "__main__":
    main()
