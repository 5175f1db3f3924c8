"""Sample generators of the matrix products (gems/ops/blas/): mm, bmm, addmm, baddbmm, mv, addmv, addr,
dot, vdot, and the composite calls that reach them (matmul, linear, outer, kron).

Quick sizes are odd and small (masks run; the interpreter costs about 1 ms per program); K crosses
one block in the "long-k" variants. Layouts: contiguous, transposed, strided, expanded batches
(stride 0). Every product also has an empty K (a sum over nothing: zeros, or beta * self), an empty
result, NaN/Inf operands, ``out=``, the gradient, and the bad inputs ATen refuses (each must raise
the same exception type).
"""

from __future__ import annotations

import torch

from gems.spec import Sample
from gems.testing.samples import make_tensor

# (M, K, N) of the main product; quick sizes stay within one 32x32x32 tile of the interpreter vendor's
# config, except LONG_K, which crosses K blocks (and ends in a partial one).
QUICK_MKN = (13, 19, 11)
FULL_MKN = (257, 129, 193)
QUICK_LONG_K = 83
FULL_LONG_K = 1031
# (M, K, N) of the products that reach gems/ops/blas/persistent.py's GEMM in fp16/bf16 under the interpreter
# vendor's gemm_route thresholds (its heuristics/blas.py), in quick and full mode alike: TMA mode (rows of
# 16-byte multiples, 4 tiles of 32x32 over 3 K steps, the last partial), pointer mode (rows TMA cannot read),
# pointer mode with K split in two (one tile, 4 K steps), pointer mode with the last of 9 tiles split in two.
PERSISTENT_TMA = (40, 72, 48)
PERSISTENT_POINTER = (40, 36, 48)
PERSISTENT_SPLIT = (24, 100, 20)
PERSISTENT_TAIL = (72, 100, 72)
# (M, K, N) of few-row products past 16 rows that skinny.py's kernel takes in fp16/bf16 under the interpreter
# vendor's SKINNY_MAX_ROWS (K of at least 128): its 32-row tile, and its 64-row tile (M > N: computed
# transposed). fp32 and fp64 take gemm.py's GEMM there.
SKINNY_32 = (24, 128, 40)
SKINNY_64 = (72, 128, 40)
# Length of an inner product (dot, vdot) past two blocks of the interpreter vendor's "reduction" heuristics
# (4096), so quick mode runs its split (two-pass) form too; in full mode past 4 x 64 steps of 4096 (the nvidia
# vendor's split).
QUICK_DOT_SPLIT, FULL_DOT_SPLIT = 10007, (1 << 20) + 3
ALPHA, BETA = 0.5, 2.0  # exact in every dtype, so scaling itself adds no rounding


def _sizes(quick):
    return (QUICK_MKN if quick else FULL_MKN), (QUICK_LONG_K if quick else FULL_LONG_K)


def _make(dtype, device):
    def make(shape, layout="contiguous"):
        """A tensor of ``shape`` laid out contiguous, transposed (last two dims swapped in memory) or strided."""
        if layout == "transposed":
            return make_tensor((*shape[:-2], shape[-1], shape[-2]), dtype, device).transpose(-1, -2)
        if layout == "strided":
            return make_tensor((*shape[:-1], shape[-1] * 2), dtype, device)[..., ::2]
        return make_tensor(shape, dtype, device)
    return make


def _special(t):
    """``t`` with NaN, +Inf and -Inf written into its first row."""
    t = t.clone()
    row = t.reshape(-1, t.shape[-1])[0] if t.dim() > 1 else t
    for i, v in enumerate((float("nan"), float("inf"), float("-inf"))):
        if i < row.numel():
            row[i] = v
    return t


def out_call(fn):
    """``fn(*args, out=<empty tensor of the first tensor's dtype and device>)``: the oracle gets a float64 one."""
    def call(*args, **kwargs):
        first = next(a for a in args if isinstance(a, torch.Tensor))
        return fn(*args, **kwargs, out=torch.empty(0, dtype=first.dtype, device=first.device))
    call.__name__ = f"{getattr(fn, '__name__', 'call')}_out"
    return call


def _errors(name, dtype, device, cases, inplace_broadcast=None):
    """Bad inputs, listed once (under float32): each is (variant, builder). ``inplace_broadcast`` builds the
    arguments of ``name_`` with a self that only broadcasts to the result (ATen refuses it in place)."""
    if dtype != torch.float32:
        return []
    samples = [Sample(f"error-{variant}", build, expects=name) for variant, build in cases]
    if inplace_broadcast is not None:
        samples.append(Sample("error-inplace-broadcast-self", inplace_broadcast, expects=f"{name}_",
                              call=lambda s, *rest: getattr(s, f"{name}_")(*rest)))
    return samples


def mm_samples(dtype, device, quick):
    (m, k, n), long_k = _sizes(quick)
    mk = _make(dtype, device)
    other = torch.float64 if dtype != torch.float64 else torch.float32
    cases = [
        Sample("contiguous", lambda: (mk((m, k)), mk((k, n))), reduction_size=k),
        Sample("noncontiguous-transposed", lambda: (mk((m, k), "transposed"), mk((k, n), "transposed")),
               reduction_size=k),
        Sample("noncontiguous-strided", lambda: (mk((m, k), "strided"), mk((k, n), "strided")), reduction_size=k),
        Sample("long-k", lambda: (mk((m, long_k)), mk((long_k, n), "transposed")), reduction_size=long_k),
        Sample("one-row", lambda: (mk((1, long_k)), mk((long_k, n))), reduction_size=long_k),
        Sample("one-column", lambda: (mk((m, long_k), "transposed"), mk((long_k, 1))), reduction_size=long_k),
        Sample("empty-k", lambda: (mk((m, 0)), mk((0, n)))),
        Sample("empty", lambda: (mk((0, k)), mk((k, n)))),
        Sample("special-values", lambda: (_special(mk((m, k))), mk((k, n))), reduction_size=k),
        # K a whole number of K blocks (64: of 32 and 64 wide ones): the loads without a K mask; 17 rows and
        # columns, past skinny.py's few-row product.
        Sample("even-k", lambda: (mk((17, 64)), mk((64, 17))), reduction_size=64),
        Sample("out", lambda: (mk((m, k)), mk((k, n))), call=out_call(torch.mm), expects="mm.out", reduction_size=k),
        Sample("out-of-result-shape", lambda: (mk((m, k)), mk((k, n)), mk((m, n))),
               call=lambda a, b, o: torch.mm(a, b, out=o), expects="mm.out", reduction_size=k),
        Sample("grad", lambda: (mk((m, k)).requires_grad_(), mk((k, n)).requires_grad_()), grad=True,
               reduction_size=max(m, k, n)),
        # Composite calls that decompose into mm (CompositeImplicitAutograd: they reach the mm kernel).
        Sample("matmul-3d-2d", lambda: (mk((3, m, k)), mk((k, n))), call=torch.matmul, reduction_size=k),
        Sample("linear-no-bias", lambda: (mk((m, k)), mk((n, k))), call=torch.nn.functional.linear,
               reduction_size=k),
        *_persistent_mm_samples(mk),
        Sample("skinny-32-rows", lambda: (mk(SKINNY_32[:2]), mk(SKINNY_32[1:])), reduction_size=SKINNY_32[1]),
        Sample("skinny-64-rows-linear", lambda: (mk(SKINNY_64[:2]), mk(SKINNY_64[:0:-1])),
               call=torch.nn.functional.linear, reduction_size=SKINNY_64[1]),
    ]
    cases += _errors("mm", dtype, device, [
        ("shape-mismatch", lambda: (mk((m, k)), mk((k + 1, n)))),
        ("rank", lambda: (mk((k,)), mk((k, n)))),
        ("dtype-mix", lambda: (mk((m, k)), make_tensor((k, n), other, device))),
    ])
    if dtype == torch.float32:
        cases.append(Sample("error-out-dtype", lambda: (mk((m, k)), mk((k, n)), make_tensor((m, n), other, device)),
                            call=lambda a, b, o: torch.mm(a, b, out=o), expects="mm.out"))
    return cases


def _persistent_mm_samples(mk):
    """mm through persistent.py's GEMM (fp16/bf16; fp32 and fp64 run gemm.py's): each load mode, the layouts
    linear's forward (b = W^T, K-major) and backward (grad_W = g^T x: a M-major) hand to ATen."""
    (m, k, n), (pm, pk, pn), (sm, sk, sn) = PERSISTENT_TMA, PERSISTENT_POINTER, PERSISTENT_SPLIT
    tm, tk, tn = PERSISTENT_TAIL
    return [
        Sample("persistent-tma", lambda: (mk((m, k)), mk((k, n))), reduction_size=k),
        Sample("persistent-tma-transposed", lambda: (mk((m, k), "transposed"), mk((k, n), "transposed")),
               reduction_size=k),
        Sample("persistent-tma-special-values", lambda: (_special(mk((m, k))), mk((k, n))), reduction_size=k),
        Sample("persistent-pointer", lambda: (mk((pm, pk)), mk((pk, pn), "transposed")), reduction_size=pk),
        Sample("persistent-split-k", lambda: (mk((sm, sk)), mk((sk, sn))), reduction_size=sk),
        Sample("persistent-split-tail", lambda: (mk((tm, tk)), mk((tk, tn))), reduction_size=tk),
        Sample("persistent-linear-grad", lambda: (mk((m, k)).requires_grad_(), mk((n, k)).requires_grad_()),
               call=torch.nn.functional.linear, grad=True, reduction_size=max(m, k, n)),
    ]


def bmm_samples(dtype, device, quick):
    (m, k, n), long_k = _sizes(quick)
    mk = _make(dtype, device)
    b = 3
    other = torch.float64 if dtype != torch.float64 else torch.float32
    cases = [
        Sample("contiguous", lambda: (mk((b, m, k)), mk((b, k, n))), reduction_size=k),
        Sample("noncontiguous-transposed", lambda: (mk((b, m, k), "transposed"), mk((b, k, n), "transposed")),
               reduction_size=k),
        Sample("noncontiguous-strided", lambda: (mk((b, m, k), "strided"), mk((b, k, n), "strided")),
               reduction_size=k),
        Sample("batch-permuted", lambda: (mk((m, b, k)).transpose(0, 1), mk((b, k, n))), reduction_size=k),
        # The harness copies inputs densely, so the stride-0 batch is made inside the call.
        Sample("expanded-batch", lambda: (mk((1, m, k)), mk((b, k, n))),
               call=lambda x, y: torch.bmm(x.expand(b, m, k), y), reduction_size=k),
        Sample("long-k", lambda: (mk((b, m, long_k)), mk((b, long_k, n))), reduction_size=long_k),
        Sample("one-row", lambda: (mk((1, 1, long_k)), mk((1, long_k, n))), reduction_size=long_k),
        Sample("empty-k", lambda: (mk((b, m, 0)), mk((b, 0, n)))),
        Sample("empty-batch", lambda: (mk((0, m, k)), mk((0, k, n)))),
        Sample("special-values", lambda: (_special(mk((b, m, k))), mk((b, k, n))), reduction_size=k),
        Sample("out", lambda: (mk((b, m, k)), mk((b, k, n))), call=out_call(torch.bmm), expects="bmm.out",
               reduction_size=k),
        Sample("grad", lambda: (mk((b, m, k)).requires_grad_(), mk((b, k, n)).requires_grad_()), grad=True,
               reduction_size=max(m, k, n)),
        Sample("matmul-batched", lambda: (mk((b, m, k)), mk((b, k, n))), call=torch.matmul, reduction_size=k),
        Sample("matmul-broadcast", lambda: (mk((2, 1, m, k)), mk((b, k, n))), call=torch.matmul, reduction_size=k),
    ]
    return cases + _errors("bmm", dtype, device, [
        ("batch-mismatch", lambda: (mk((b, m, k)), mk((b + 1, k, n)))),
        ("shape-mismatch", lambda: (mk((b, m, k)), mk((b, k + 1, n)))),
        ("rank", lambda: (mk((m, k)), mk((b, k, n)))),
        ("dtype-mix", lambda: (mk((b, m, k)), make_tensor((b, k, n), other, device))),
    ])


def addmm_samples(dtype, device, quick):
    (m, k, n), long_k = _sizes(quick)
    mk = _make(dtype, device)
    other = torch.float64 if dtype != torch.float64 else torch.float32
    ab = {"alpha": ALPHA, "beta": BETA}
    cases = [
        Sample("contiguous", lambda: (mk((m, n)), mk((m, k)), mk((k, n))), reduction_size=k),
        Sample("alpha-beta", lambda: (mk((m, n)), mk((m, k)), mk((k, n))), ab, reduction_size=k),
        Sample("bias-row", lambda: (mk((n,)), mk((m, k), "transposed"), mk((k, n))), ab, reduction_size=k),
        Sample("bias-column", lambda: (mk((m, 1)), mk((m, k)), mk((k, n), "transposed")), reduction_size=k),
        Sample("noncontiguous-strided", lambda: (mk((m, n), "strided"), mk((m, k), "strided"), mk((k, n), "strided")),
               reduction_size=k),
        Sample("long-k", lambda: (mk((m, n)), mk((m, long_k)), mk((long_k, n))), ab, reduction_size=long_k),
        Sample("one-row", lambda: (mk((n,)), mk((1, long_k)), mk((long_k, n))), ab, reduction_size=long_k),
        Sample("beta-zero-nan-self", lambda: (torch.full((m, n), float("nan"), dtype=dtype, device=device),
                                              mk((m, k)), mk((k, n))), {"beta": 0.0}, reduction_size=k),
        Sample("empty-k", lambda: (mk((m, n)), mk((m, 0)), mk((0, n))), ab),
        Sample("empty", lambda: (mk((0, n)), mk((0, k)), mk((k, n)))),
        Sample("special-values", lambda: (_special(mk((m, n))), mk((m, k)), _special(mk((k, n)))), reduction_size=k),
        Sample("out", lambda: (mk((m, n)), mk((m, k)), mk((k, n))), ab, call=out_call(torch.addmm),
               expects="addmm.out", reduction_size=k),
        Sample("out-is-self", lambda: (mk((m, n)), mk((m, k)), mk((k, n))), ab,
               call=lambda s, a, b, **kw: torch.addmm(s, a, b, **kw, out=s), expects="addmm.out", reduction_size=k),
        Sample("out-beside-self", lambda: (mk((2, m, n)), mk((m, k)), mk((k, n))), ab,
               call=lambda s, a, b, **kw: torch.addmm(s[0], a, b, **kw, out=s[1]), expects="addmm.out",
               reduction_size=k),
        Sample("inplace", lambda: (mk((m, n)), mk((m, k)), mk((k, n))), ab,
               call=lambda s, a, b, **kw: s.addmm_(a, b, **kw), expects="addmm_", reduction_size=k),
        Sample("grad", lambda: (mk((m, n)).requires_grad_(), mk((m, k)).requires_grad_(),
                                mk((k, n)).requires_grad_()), grad=True, expects=("addmm", "mm"),
               reduction_size=max(m, k, n)),
        Sample("linear-bias", lambda: (mk((2, m, k)), mk((n, k)), mk((n,))), call=torch.nn.functional.linear,
               reduction_size=k),
        *_persistent_addmm_samples(mk, ab),
        Sample("skinny-64-rows-linear-bias", lambda: (mk(SKINNY_64[:2]), mk(SKINNY_64[:0:-1]), mk(SKINNY_64[2:])),
               call=torch.nn.functional.linear, reduction_size=SKINNY_64[1]),
    ]
    return cases + _errors("addmm", dtype, device, [
        ("shape-mismatch", lambda: (mk((m, n)), mk((m, k)), mk((k + 1, n)))),
        ("self-shape", lambda: (mk((m + 1, n)), mk((m, k)), mk((k, n)))),
        ("rank", lambda: (mk((m, n)), mk((m, k, 1)), mk((k, n)))),
        ("dtype-mix", lambda: (make_tensor((m, n), other, device), mk((m, k)), mk((k, n)))),
    ], inplace_broadcast=lambda: (mk((n,)), mk((m, k)), mk((k, n))))


def _persistent_addmm_samples(mk, ab):
    """addmm through persistent.py's GEMM: linear's bias row, a full self with alpha and beta, in place (the
    result is the bias it reads), a split K whose second pass adds the bias (every tile; the last tile, in place),
    and linear's gradient."""
    (m, k, n), (sm, sk, sn), (tm, tk, tn) = PERSISTENT_TMA, PERSISTENT_SPLIT, PERSISTENT_TAIL
    return [
        Sample("persistent-linear-bias", lambda: (mk((m, k)), mk((n, k)), mk((n,))),
               call=torch.nn.functional.linear, reduction_size=k),
        Sample("persistent-alpha-beta", lambda: (mk((m, n)), mk((m, k)), mk((k, n), "transposed")), ab,
               reduction_size=k),
        Sample("persistent-inplace", lambda: (mk((m, n)), mk((m, k)), mk((k, n))), ab,
               call=lambda s, a, b, **kw: s.addmm_(a, b, **kw), expects="addmm_", reduction_size=k),
        Sample("persistent-split-k", lambda: (mk((sn,)), mk((sm, sk)), mk((sk, sn))), ab, reduction_size=sk),
        Sample("persistent-split-tail-inplace", lambda: (mk((tm, tn)), mk((tm, tk)), mk((tk, tn))), ab,
               call=lambda s, a, b, **kw: s.addmm_(a, b, **kw), expects="addmm_", reduction_size=tk),
        Sample("persistent-linear-grad", lambda: (mk((m, k)).requires_grad_(), mk((n, k)).requires_grad_(),
                                                  mk((n,)).requires_grad_()),
               call=torch.nn.functional.linear, grad=True, expects=("addmm", "mm"), reduction_size=max(m, k, n)),
    ]


def baddbmm_samples(dtype, device, quick):
    (m, k, n), long_k = _sizes(quick)
    mk = _make(dtype, device)
    b = 3
    other = torch.float64 if dtype != torch.float64 else torch.float32
    ab = {"alpha": ALPHA, "beta": BETA}
    cases = [
        Sample("contiguous", lambda: (mk((b, m, n)), mk((b, m, k)), mk((b, k, n))), reduction_size=k),
        Sample("alpha-beta", lambda: (mk((b, m, n)), mk((b, m, k), "transposed"), mk((b, k, n))), ab,
               reduction_size=k),
        Sample("broadcast-self", lambda: (mk((n,)), mk((b, m, k)), mk((b, k, n), "strided")), ab, reduction_size=k),
        Sample("expanded-batch", lambda: (mk((b, m, n)), mk((1, m, k)), mk((b, k, n))), ab,
               call=lambda s, x, y, **kw: torch.baddbmm(s, x.expand(b, m, k), y, **kw), reduction_size=k),
        Sample("long-k", lambda: (mk((b, m, n)), mk((b, m, long_k)), mk((b, long_k, n))), reduction_size=long_k),
        Sample("beta-zero-nan-self", lambda: (torch.full((b, m, n), float("nan"), dtype=dtype, device=device),
                                              mk((b, m, k)), mk((b, k, n))), {"beta": 0.0}, reduction_size=k),
        Sample("empty-k", lambda: (mk((b, m, n)), mk((b, m, 0)), mk((b, 0, n))), ab),
        Sample("empty", lambda: (mk((0, m, n)), mk((0, m, k)), mk((0, k, n)))),
        Sample("out", lambda: (mk((b, m, n)), mk((b, m, k)), mk((b, k, n))), ab, call=out_call(torch.baddbmm),
               expects="baddbmm.out", reduction_size=k),
        Sample("inplace", lambda: (mk((b, m, n)), mk((b, m, k)), mk((b, k, n))), ab,
               call=lambda s, x, y, **kw: s.baddbmm_(x, y, **kw), expects="baddbmm_", reduction_size=k),
        Sample("grad", lambda: (mk((b, m, n)).requires_grad_(), mk((b, m, k)).requires_grad_(),
                                mk((b, k, n)).requires_grad_()), ab, grad=True, reduction_size=max(m, k, n)),
    ]
    return cases + _errors("baddbmm", dtype, device, [
        ("shape-mismatch", lambda: (mk((b, m, n)), mk((b, m, k)), mk((b, k + 1, n)))),
        ("rank", lambda: (mk((b, m, n)), mk((m, k)), mk((b, k, n)))),
        ("dtype-mix", lambda: (mk((b, m, n)), mk((b, m, k)), make_tensor((b, k, n), other, device))),
    ], inplace_broadcast=lambda: (mk((n,)), mk((b, m, k)), mk((b, k, n))))


def mv_samples(dtype, device, quick):
    (m, k, _), long_k = _sizes(quick)
    mk = _make(dtype, device)
    other = torch.float64 if dtype != torch.float64 else torch.float32
    cases = [
        Sample("contiguous", lambda: (mk((m, k)), mk((k,))), reduction_size=k),
        Sample("noncontiguous-transposed", lambda: (mk((m, k), "transposed"), mk((k,))), reduction_size=k),
        Sample("noncontiguous-strided", lambda: (mk((m, k), "strided"), mk((k * 2,))[::2]), reduction_size=k),
        Sample("long-k", lambda: (mk((m, long_k)), mk((long_k,))), reduction_size=long_k),
        # Rows enough for two row blocks per multiprocessor (the interpreter reports one): K is not split.
        Sample("tall", lambda: (mk((65, k)), mk((k,))), reduction_size=k),
        # One row: an inner product (gemm.inner), not the GEMV kernel.
        Sample("one-row", lambda: (mk((1, long_k)), mk((long_k,))), reduction_size=long_k),
        Sample("expanded-vector", lambda: (mk((m, k)), mk((1,))), call=lambda a, v: torch.mv(a, v.expand(k)),
               reduction_size=k),
        Sample("empty-k", lambda: (mk((m, 0)), mk((0,)))),
        Sample("empty", lambda: (mk((0, k)), mk((k,)))),
        Sample("special-values", lambda: (mk((m, k)), _special(mk((k,)))), reduction_size=k),
        Sample("out", lambda: (mk((m, k)), mk((k,))), call=out_call(torch.mv), expects="mv.out", reduction_size=k),
        Sample("grad", lambda: (mk((m, k)).requires_grad_(), mk((k,)).requires_grad_()), grad=True,
               expects="mv", reduction_size=max(m, k)),
        Sample("matmul-matrix-vector", lambda: (mk((m, k)), mk((k,))), call=torch.matmul, reduction_size=k),
    ]
    return cases + _errors("mv", dtype, device, [
        ("shape-mismatch", lambda: (mk((m, k)), mk((k + 1,)))),
        ("rank", lambda: (mk((m, k)), mk((k, 1)))),
        ("dtype-mix", lambda: (mk((m, k)), make_tensor((k,), other, device))),
    ])


def addmv_samples(dtype, device, quick):
    (m, k, _), long_k = _sizes(quick)
    mk = _make(dtype, device)
    other = torch.float64 if dtype != torch.float64 else torch.float32
    ab = {"alpha": ALPHA, "beta": BETA}
    cases = [
        Sample("contiguous", lambda: (mk((m,)), mk((m, k)), mk((k,))), reduction_size=k),
        Sample("alpha-beta", lambda: (mk((m,)), mk((m, k), "transposed"), mk((k,))), ab, reduction_size=k),
        Sample("broadcast-self", lambda: (mk((1,)), mk((m, long_k)), mk((long_k,))), ab, reduction_size=long_k),
        Sample("beta-zero-nan-self", lambda: (torch.full((m,), float("nan"), dtype=dtype, device=device),
                                              mk((m, k)), mk((k,))), {"beta": 0.0}, reduction_size=k),
        Sample("empty-k", lambda: (mk((m,)), mk((m, 0)), mk((0,))), ab),
        Sample("empty", lambda: (mk((0,)), mk((0, k)), mk((k,)))),
        Sample("out", lambda: (mk((m,)), mk((m, k)), mk((k,))), ab, call=out_call(torch.addmv), expects="addmv.out",
               reduction_size=k),
        Sample("inplace", lambda: (mk((m,)), mk((m, k)), mk((k,))), ab,
               call=lambda s, a, v, **kw: s.addmv_(a, v, **kw), expects="addmv_", reduction_size=k),
    ]
    return cases + _errors("addmv", dtype, device, [
        ("self-shape", lambda: (mk((m + 1,)), mk((m, k)), mk((k,)))),
        ("shape-mismatch", lambda: (mk((m,)), mk((m, k)), mk((k + 1,)))),
        ("dtype-mix", lambda: (make_tensor((m,), other, device), mk((m, k)), mk((k,)))),
    ], inplace_broadcast=lambda: (mk((1,)), mk((m, k)), mk((k,))))


def dot_samples(call, name):
    def samples(dtype, device, quick):
        (_, k, _), long_k = _sizes(quick)
        split = QUICK_DOT_SPLIT if quick else FULL_DOT_SPLIT
        mk = _make(dtype, device)
        other = torch.float64 if dtype != torch.float64 else torch.float32
        cases = [
            Sample("contiguous", lambda: (mk((k,)), mk((k,))), reduction_size=k),
            Sample("noncontiguous-strided", lambda: (mk((long_k * 2,))[::2], mk((long_k * 3,))[::3]),
                   reduction_size=long_k),
            Sample("long", lambda: (mk((long_k,)), mk((long_k,))), reduction_size=long_k),
            Sample("split-strided", lambda: (mk((split * 2,))[::2], mk((split,))), reduction_size=split),
            Sample("expanded", lambda: (mk((1,)).expand(k), mk((k,))), reduction_size=k),
            Sample("empty", lambda: (mk((0,)), mk((0,)))),
            Sample("special-values", lambda: (_special(mk((k,))), mk((k,))), reduction_size=k),
            Sample("out", lambda: (mk((k,)), mk((k,))), call=out_call(call), expects=f"{name}.out", reduction_size=k),
        ]
        if name == "dot":
            cases += [
                Sample("grad", lambda: (mk((k,)).requires_grad_(), mk((k,)).requires_grad_()), grad=True,
                       reduction_size=k),
                Sample("matmul-vector-vector", lambda: (mk((k,)), mk((k,))), call=torch.matmul, reduction_size=k),
            ]
        return cases + _errors(name, dtype, device, [
            ("size-mismatch", lambda: (mk((k,)), mk((k + 1,)))),
            ("rank", lambda: (mk((2, k)), mk((2, k)))),
            ("dtype-mix", lambda: (mk((k,)), make_tensor((k,), other, device))),
        ])
    return samples


def addr_samples(dtype, device, quick):
    (m, _, n), _ = _sizes(quick)
    mk = _make(dtype, device)
    ab = {"alpha": ALPHA, "beta": BETA}
    cases = [
        Sample("contiguous", lambda: (mk((m, n)), mk((m,)), mk((n,)))),
        Sample("alpha-beta", lambda: (mk((m, n), "transposed"), mk((m * 2,))[::2], mk((n,))), ab),
        Sample("broadcast-self", lambda: (mk((n,)), mk((m,)), mk((n,))), ab),
        Sample("beta-zero-nan-self", lambda: (torch.full((m, n), float("nan"), dtype=dtype, device=device),
                                              mk((m,)), mk((n,))), {"beta": 0.0}),
        Sample("empty", lambda: (mk((0, n)), mk((0,)), mk((n,)))),
        Sample("special-values", lambda: (mk((m, n)), _special(mk((m,))), mk((n,)))),
        Sample("out", lambda: (mk((m, n)), mk((m,)), mk((n,))), ab, call=out_call(torch.addr), expects="addr.out"),
        Sample("inplace", lambda: (mk((m, n)), mk((m,)), mk((n,))), ab,
               call=lambda s, a, b, **kw: s.addr_(a, b, **kw), expects="addr_"),
        Sample("grad", lambda: (mk((m, n)).requires_grad_(), mk((m,)).requires_grad_(), mk((n,)).requires_grad_()),
               ab, grad=True, expects="addr"),
        # outer (and ger) and kron are CompositeImplicitAutograd: they decompose into a broadcast multiply.
        Sample("outer", lambda: (mk((m,)), mk((n,))), call=torch.outer, expects="mul.Tensor"),
        Sample("kron", lambda: (mk((3, 4)), mk((5, 2))), call=torch.kron, expects="mul.Tensor"),
    ]
    return cases + _errors("addr", dtype, device, [
        ("rank", lambda: (mk((m, n)), mk((m, 1)), mk((n,)))),
        ("self-shape", lambda: (mk((m, n + 1)), mk((m,)), mk((n,)))),
    ]) + [Sample("type-promotion", lambda: (mk((m, n)), mk((m,)), make_tensor((n,), torch.float64, device)), ab)]


# The operand layouts of a product's perf shape with a trailing layout entry (the models suite), as linear's
# products reach ATen: a and b row-major (grad_x = g @ W), b K-major (the forward's W.t(); attention's k^T),
# a M-major (grad_W = g^T @ x, a = g.t()).
ROW_MAJOR, B_K_MAJOR, A_M_MAJOR = 0, 1, 2


def perf_inputs(kind: str):
    """Perf inputs by kind: "mm" [M, K, N]; "bmm" [B, M, K, N]; "addmm" [M, K, N] with a bias row;
    "baddbmm" [B, M, K, N]; "mv" and "addmv" [M, K]; "dot" [K]. A product's shape may end in a layout
    (ROW_MAJOR, B_K_MAJOR, A_M_MAJOR; row-major without). Each declares its K as the reduction size, so
    the check's fp32 tolerance grows with sqrt(K) as conformance's does (at K = 8192, cuBLAS's own mm is 7e-4
    from the float64 product, beyond a K = 1 tolerance)."""
    def inputs(shape, dtype, device):
        t = lambda *s: make_tensor(s, dtype, device, low=-1.0, high=1.0)  # noqa: E731

        def operands(dims):
            """a, b of dims [(B,) M, K, N] or [(B,) M, K, N, layout]."""
            rank = 4 if kind in ("bmm", "baddbmm") else 3
            *batch, m, k, n = dims[:rank]
            layout = dims[rank] if len(dims) > rank else ROW_MAJOR
            a = t(*batch, k, m).transpose(-1, -2) if layout == A_M_MAJOR else t(*batch, m, k)
            return a, t(*batch, n, k).transpose(-1, -2) if layout == B_K_MAJOR else t(*batch, k, n)

        if kind == "mm":
            return Sample("perf", operands(shape), reduction_size=shape[1])
        if kind == "bmm":
            return Sample("perf", operands(shape), reduction_size=shape[2])
        if kind == "addmm":
            return Sample("perf", (t(shape[2]), *operands(shape)), reduction_size=shape[1])
        if kind == "baddbmm":
            b, m, _, n = shape[:4]
            return Sample("perf", (t(b, m, n), *operands(shape)), reduction_size=shape[2])
        if kind == "mv":
            m, k = shape
            return Sample("perf", (t(m, k), t(k)), reduction_size=k)
        if kind == "addmv":
            m, k = shape
            return Sample("perf", (t(m), t(m, k), t(k)), reduction_size=k)
        (k,) = shape
        return Sample("perf", (t(k), t(k)), reduction_size=k)
    return inputs


def product_flops(operand: int):
    """flops(sample, result) = 2 * (result elements) * K, K the last dimension of ``sample.args[operand]``
    (the first factor of the product)."""
    def flops(sample, result) -> int:
        return 2 * max(result.numel(), 1) * sample.args[operand].shape[-1]
    return flops


def moved_bytes():
    """bytes(sample, result): every operand read once and the result written once."""
    return _moved_bytes


def _moved_bytes(sample, result) -> int:
    tensors = [a for a in sample.args if isinstance(a, torch.Tensor)] + [result]
    return sum(t.numel() * t.element_size() for t in tensors)
