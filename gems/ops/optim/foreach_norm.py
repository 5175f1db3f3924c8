"""_foreach_norm.Scalar: the vector norm of every tensor of a list, each a 0-d tensor (of ``dtype`` when
given), for every real ``ord``: 2, 1, inf (ATen's fast path), and as linalg_vector_norm computes the
others: 0 (the count of nonzeros), -inf (the smallest absolute value), any other p (sum |x|^p)^(1/p).
``clip_grad_norm_(foreach=True)`` takes the grads' norms with it.

Two launches per dtype group, whatever the list's length: the first computes a partial result per
program (its CHUNK of a row: a sum, or the largest or smallest absolute value, in fp32, fp64 for fp64),
the second combines each row's partials in a fixed order and writes the norm (deterministic: no
atomics). NaN in a tensor gives a NaN norm for every order but 0, as ATen's.
"""

import math

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from gems.codegen.pointwise import float64_bits
from gems.dtypes import ATEN_NAMES, FLOATS
from gems.ops.optim import multi_tensor as mt
from gems.runtime.launch import Launcher
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, lazy

MAX, L1, L2, POW, NONZERO, MIN = 0, 1, 2, 3, 4, 5  # the kernels' ORD for ord = inf, 1, 2, p, 0, -inf
ORDERS = {math.inf: MAX, 1.0: L1, 2.0: L2, 0.0: NONZERO, -math.inf: MIN}
FINISH_BLOCK = 1024  # partials one program of the second launch combines per step
# ATen's names of the complex dtypes, for its message refusing one as the dtype of real lists
_COMPLEX_NAMES = {torch.complex32: "ComplexHalf", torch.complex64: "ComplexFloat", torch.complex128: "ComplexDouble"}


@triton.jit
def _accumulate(acc, x, mask, p, ORD: tl.constexpr):
    a = tl.abs(x)
    if ORD == 2:
        acc += tl.where(mask, a * a, 0.0)
    elif ORD == 1:
        acc += tl.where(mask, a, 0.0)
    elif ORD == 3:
        acc += tl.where(mask, libdevice.pow(a, p), 0.0)
    elif ORD == 4:
        acc += tl.where(mask & (x != 0), 1.0, 0.0)
    elif ORD == 0:  # NaN wins: the comparison with NaN keeps it
        acc = tl.where(mask & ((a > acc) | (a != a)), a, acc)
    else:
        acc = tl.where(mask & ((a < acc) | (a != a)), a, acc)
    return acc


@triton.jit
def _combine(acc, ORD: tl.constexpr):
    """The block's result: its sum, or its largest (smallest) value with NaN winning."""
    if ORD == 0:
        r = tl.max(acc, axis=0)
    elif ORD == 5:
        r = tl.min(acc, axis=0)
    else:
        r = tl.sum(acc, axis=0)
    if ORD == 0 or ORD == 5:
        r = tl.where(tl.max((acc != acc).to(tl.int32), axis=0) > 0, float("nan"), r)
    return r


@triton.jit(do_not_specialize=["p_bits"])
def _norm_partials(table_ptr, partials_ptr, n_rows, p_bits, ORD: tl.constexpr, IN: tl.constexpr, ACC: tl.constexpr,
                   HAS_STRIDED: tl.constexpr, ALIGNED: tl.constexpr, WIDTH: tl.constexpr, STEPS: tl.constexpr,
                   CHUNK_SIZE: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    """Row words: numel, strided flag, input address, output address, then (strided rows) 4 sizes and 4
    strides. One partial per program, in program order."""
    row_ptr, start, numel = mt.program_row(table_ptr, n_rows, WIDTH, STEPS, CHUNK_SIZE)
    end = tl.minimum(start + CHUNK_SIZE, numel)
    x_ptr = mt.typed(row_ptr, 2, IN, ALIGNED)
    offs = tl.arange(0, BLOCK_SIZE)
    p = mt.f64_bits(p_bits).to(ACC)
    acc = tl.full([BLOCK_SIZE], float("inf") if ORD == 5 else 0.0, ACC)
    strided = tl.load(row_ptr + 1) != 0 if HAS_STRIDED else False
    if strided:
        s1, s2, s3 = tl.load(row_ptr + 5), tl.load(row_ptr + 6), tl.load(row_ptr + 7)
        t0, t1, t2, t3 = tl.load(row_ptr + 8), tl.load(row_ptr + 9), tl.load(row_ptr + 10), tl.load(row_ptr + 11)
        for base in range(start, end, BLOCK_SIZE):
            idx = base + offs
            rest = idx // s3
            offset = (idx % s3) * t3 + (rest % s2) * t2 + (rest // s2 % s1) * t1 + (rest // s2 // s1) * t0
            mask = idx < end
            acc = _accumulate(acc, tl.load(x_ptr + offset, mask=mask).to(ACC), mask, p, ORD)
    else:
        full_end = start + (end - start) // BLOCK_SIZE * BLOCK_SIZE
        for base in range(start, full_end, BLOCK_SIZE):
            acc = _accumulate(acc, tl.load(x_ptr + base + offs).to(ACC), offs < BLOCK_SIZE, p, ORD)
        if full_end < end:
            idx = full_end + offs
            acc = _accumulate(acc, tl.load(x_ptr + idx, mask=idx < end).to(ACC), idx < end, p, ORD)
    tl.store(partials_ptr + tl.program_id(0), _combine(acc, ORD))


@triton.jit(do_not_specialize=["p_bits"])
def _norm_finish(table_ptr, partials_ptr, n_rows, n_programs, p_bits, ORD: tl.constexpr, OUT: tl.constexpr,
                 ACC: tl.constexpr, WIDTH: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    """Program r: the norm of row r from its partials, in their order."""
    row = tl.program_id(0)
    first = tl.load(table_ptr + row)
    last = tl.load(table_ptr + row + 1, mask=row + 1 < n_rows, other=n_programs)
    offs = tl.arange(0, BLOCK_SIZE)
    identity = float("inf") if ORD == 5 else 0.0
    acc = tl.full([BLOCK_SIZE], identity, ACC)
    for base in range(first, last, BLOCK_SIZE):
        idx = base + offs
        part = tl.load(partials_ptr + idx, mask=idx < last, other=identity)
        if ORD == 0:
            acc = tl.where((part > acc) | (part != part), part, acc)
        elif ORD == 5:
            acc = tl.where((part < acc) | (part != part), part, acc)
        else:
            acc += part
    norm = _combine(acc, ORD)
    if ORD == 2:
        norm = tl.sqrt_rn(norm) if ACC == tl.float32 else tl.sqrt(norm)
    elif ORD == 3:  # on a one-element block: libdevice's scalar form differs between compiler and interpreter
        norm = tl.sum(libdevice.pow(tl.full([1], 0.0, ACC) + norm, 1.0 / mt.f64_bits(p_bits).to(ACC)), axis=0)
    out_ptr = mt.typed(table_ptr + n_rows + row.to(tl.int64) * WIDTH, 3, OUT, False)
    tl.store(out_ptr, norm.to(OUT))


mt.mark(_norm_partials)
mt.mark(_norm_finish)
_partials = Launcher(_norm_partials)
_finish = Launcher(_norm_finish)


def foreach_norm(self, ord=2, dtype=None):
    mt.check_nonempty(self)
    if isinstance(ord, complex):
        raise Fallback(f"ord={ord}: ATen's linalg_vector_norm per tensor")
    order = ORDERS.get(float(ord), POW)
    mt.check_lists(self[0].device, [self])
    if dtype is not None:
        if dtype.is_complex:  # the lists are real (check_lists): ATen refuses a complex dtype for them
            raise RuntimeError(f"linalg.vector_norm: dtype should be real for real inputs, but got "
                               f"{_COMPLEX_NAMES.get(dtype, dtype)}")
        if dtype not in FLOATS:
            raise RuntimeError(f"linalg.vector_norm: dtype should be floating point or complex, but got "
                               f"{ATEN_NAMES.get(dtype, dtype)}")
        for x in self:
            if torch.promote_types(x.dtype, dtype) != dtype:
                raise RuntimeError(f"linalg.vector_norm: the dtype of the input ({ATEN_NAMES[x.dtype]}) should be "
                                   f"convertible without narrowing to the specified dtype ({ATEN_NAMES[dtype]})")
    outs, groups = [], {}
    for x in self:
        out_dtype = dtype or x.dtype
        if x.numel() == 0:
            if order in (MAX, MIN) or (order == POW and ord < 0):
                raise RuntimeError(f"linalg.vector_norm cannot compute the {ord} norm on an empty tensor because "
                                   "the operation does not have an identity")
            outs.append(torch.zeros((), dtype=out_dtype, device=x.device))
            continue
        out = torch.empty((), dtype=out_dtype, device=x.device)
        outs.append(out)
        acc = torch.float64 if torch.float64 in (x.dtype, out_dtype) else torch.float32
        group = groups.setdefault((x.dtype, out_dtype, acc), ([], [], [False]))
        group[0].append(_row(x, out))
        group[1].append(x.numel())
        group[2][0] |= group[0][-1][0] == 1
    for (in_dtype, out_dtype, acc), (rows, numels, (has_strided,)) in groups.items():
        width = max(len(r) for r in rows) + 1
        rows = [r + [0] * (width - 1 - len(r)) for r in rows]
        table, programs = mt.table(rows, numels, self[0].device)
        partials = torch.empty(programs, dtype=acc, device=self[0].device)
        p_bits = float64_bits(float(ord))
        _partials((programs,), table, partials, len(rows), p_bits, order, mt.TL_DTYPES[in_dtype], mt.TL_DTYPES[acc],
                  has_strided, mt.aligned(r[1] for r in rows), width, mt.steps_for(len(rows)), mt.CHUNK, mt.BLOCK,
                  num_warps=mt.NUM_WARPS)
        _finish((len(rows),), table, partials, len(rows), programs, p_bits, order, mt.TL_DTYPES[out_dtype],
                mt.TL_DTYPES[acc], width, FINISH_BLOCK, num_warps=mt.NUM_WARPS)
    return outs


def _row(x, out):
    """The row's words after numel."""
    if x.is_contiguous() or mt.dense(x):
        return [0, x.data_ptr(), out.data_ptr()]
    layout = mt.merged_layout(list(x.shape), [x.stride()])
    if layout is None:
        raise Fallback("a tensor with more than 4 dimensions that cannot be merged")
    sizes, (strides,) = layout
    return [1, x.data_ptr(), out.data_ptr(), *sizes, *strides]


SPECS = [
    OpSpec(name="foreach_norm", family="optim", impls={"_foreach_norm.Scalar": foreach_norm},
           call=torch._foreach_norm, samples=lazy("gems.testing.samples_optim", "norm_samples"), dtypes=FLOATS,
           tolerance="reduction", no_launch={"empty-tensors": "every tensor of the list is empty: zeros"}),
]
