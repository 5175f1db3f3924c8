"""sum: full and per-dimension sums, and the layout planning every reduction here shares.

Any reduction over a set of dimensions is run on a view (n_outer, n_red, n_inner) taken through the
input's strides, with no copy: the reduced dims merge into one (n_red, stride) when they are
contiguous with one another, the kept dims into at most two groups (outer, inner). Two tile shapes
cover the layouts (one kernel, a constexpr switch):

- "rows": the reduced elements are the closest in memory (``x.sum(-1)`` of a contiguous tensor, a
  full reduction): a program takes BLOCK_M outputs x BLOCK_K reduced elements per step, reads along K.
- "cols": some kept elements are closer in memory than the reduced ones (``x.sum(1)`` of an
  (outer, K, inner) tensor, ``x.t().sum(1)``): a program takes one outer index and BLOCK_M consecutive
  inner outputs, and reads BLOCK_K of them per step, each row of the tile contiguous.

When the outputs give too few programs to fill the device (a full reduction, a long reduced dim), the
vendor's ``SPLITS`` rule divides the reduced range between programs; each writes a partial result in
the accumulation dtype and a second launch of the same kernel adds them. Inputs whose dims cannot be
merged that way (non-adjacent reduced dims of a permuted tensor) are first copied to a contiguous
(kept..., reduced...) order. Block sizes come from the vendor's heuristics, key "reduction".

Numerics follow ATen: each element is first converted to the result dtype (``dtype=`` or ``out``),
then accumulated in fp32 (fp16, bf16, fp32), fp64, or int64 (integers and bool: results wrap like
ATen's); integer and bool inputs give int64 unless a dtype is asked for.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
import triton
import triton.language as tl

from gems.runtime import selection
from gems.runtime.launch import Launcher, cdiv
from gems.runtime.registration import Fallback
from gems.spec import OpSpec
from gems.testing.samples_reduction import reduction_perf, reduction_samples

# Offsets past this need 64-bit index math (the margin covers a block past the last element).
_INT32_SAFE = 2**31 - 1 - 2**20

FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
INTEGERS = (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8)

_TL = {
    torch.float16: tl.float16, torch.bfloat16: tl.bfloat16, torch.float32: tl.float32,
    torch.float64: tl.float64, torch.int8: tl.int8, torch.int16: tl.int16, torch.int32: tl.int32,
    torch.int64: tl.int64, torch.uint8: tl.uint8, torch.bool: tl.int1,
}


def accumulation_dtype(dtype: torch.dtype) -> torch.dtype:
    """fp16/bf16/fp32 accumulate in fp32, fp64 in fp64, integers and bool in int64 (ATen's acc types)."""
    if dtype == torch.float64:
        return torch.float64
    return torch.float32 if dtype.is_floating_point else torch.int64


# --------------------------------------------------------------------------- kernels


# triton.language's own @jit helpers (tl.sum, tl.max, tl.zeros, tl.cdiv) stay compiled-only when triton
# is imported before the interpreter vendor sets TRITON_INTERPRET (as `import gems` does), and the
# interpreter then refuses to call them. The kernels here therefore use builtins only: tl.reduce with
# triton's own combine functions (which the interpreter runs as one numpy call), tl.full, plain division.
@triton.jit
def reduce_sum(x, axis: tl.constexpr):
    return tl.reduce(x, axis, tl.standard._sum_combine)


@triton.jit
def reduce_max(x, axis: tl.constexpr):
    return tl.reduce(x, axis, tl.standard._elementwise_max)


@triton.jit
def tile_k(k, n_red, mask_m, INT64: tl.constexpr, BLOCK_K: tl.constexpr):
    """(offsets, mask) of the reduced elements k ... k + BLOCK_K - 1 below n_red, for the BLOCK_M rows."""
    offs_k = k + tl.arange(0, BLOCK_K)
    if INT64:
        offs_k = offs_k.to(tl.int64)
    return offs_k, mask_m[:, None] & (offs_k[None, :] < n_red)


@triton.jit
def output_coords(pid, n_rows, n_inner, COLS: tl.constexpr, BLOCK_M: tl.constexpr):
    """(outer index, inner index, mask) of the BLOCK_M outputs program ``pid`` computes.

    rows layout: outputs pid*BLOCK_M ... in (outer, inner) order, so both are vectors;
    cols layout: one outer index per program (a scalar) and BLOCK_M consecutive inner indices.
    """
    if COLS:
        blocks = (n_inner + BLOCK_M - 1) // BLOCK_M
        outer = pid // blocks
        inner = (pid % blocks) * BLOCK_M + tl.arange(0, BLOCK_M)
        mask = inner < n_inner
    else:
        rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
        outer = rows // n_inner
        inner = rows % n_inner
        mask = rows < n_rows
    return outer, inner, mask


@triton.jit
def _convert(x, CAST: tl.constexpr, ACC: tl.constexpr):
    """An input element as ATen sees it: converted to the result dtype, then widened to the accumulator."""
    if CAST == tl.int1:
        return (x != 0).to(ACC)  # to bool means "is nonzero", not a truncation
    else:
        return x.to(CAST).to(ACC)


@triton.jit
def _sum_kernel(
    x_ptr, out_ptr,
    n_rows, n_inner, n_red, red_per_split,
    stride_xo, stride_xn, stride_xk,
    stride_oo, stride_on, stride_os,
    CAST: tl.constexpr, ACC: tl.constexpr, COLS: tl.constexpr, INT64: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr,
):
    """out[o, n] (+ split * stride_os) = sum over k in this split's range of x[o, k, n].

    Grid: (programs over the outputs, splits of the reduced range). Each tile element keeps its own
    running sum across steps; the tile is summed across K once at the end.
    """
    pid = tl.program_id(0)
    split = tl.program_id(1)
    if INT64:
        pid = pid.to(tl.int64)
        split = split.to(tl.int64)
    outer, inner, mask_m = output_coords(pid, n_rows, n_inner, COLS, BLOCK_M)
    x_rows = x_ptr + outer * stride_xo + inner * stride_xn
    k_start = split * red_per_split
    k_end = tl.minimum(k_start + red_per_split, n_red)
    acc = tl.full([BLOCK_M, BLOCK_K], 0, ACC)
    for k in range(k_start, k_end, BLOCK_K):
        offs_k, mask = tile_k(k, k_end, mask_m, INT64, BLOCK_K)
        x = tl.load(x_rows[:, None] + offs_k[None, :] * stride_xk, mask=mask, other=0)
        acc += _convert(x, CAST, ACC)
    total = reduce_sum(acc, 1)
    if out_ptr.dtype.element_ty == tl.int1:
        total = total != 0
    out = out_ptr + outer * stride_oo + inner * stride_on + split * stride_os
    tl.store(out, total.to(out_ptr.dtype.element_ty), mask=mask_m)


_sum_launcher = Launcher(_sum_kernel)


# --------------------------------------------------------------------------- layout planning


class Layout(NamedTuple):
    """A tensor set viewed as (n_outer, n_red, n_inner); ``strides`` has (outer, red, inner) per tensor."""

    cols: bool
    n_outer: int
    n_red: int
    n_inner: int
    strides: tuple

    @property
    def n_rows(self) -> int:
        return self.n_outer * self.n_inner

    def needs_int64(self, extra: int = 0) -> bool:
        spans = (max(self.n_outer - 1, 0) * abs(so) + max(self.n_red - 1, 0) * abs(sk)
                 + max(self.n_inner - 1, 0) * abs(sn) for so, sk, sn in self.strides)
        return max(max(spans), self.n_rows, self.n_red, extra) > _INT32_SAFE


def _merge(shape, dims, strides):
    """Group ``dims`` (ordered by the first tensor's strides, largest first) into runs that are
    contiguous with one another in every tensor; returns [(size, per-tensor stride of the run)]."""
    groups = []
    for d in sorted(dims, key=lambda d: -strides[0][d]):
        step = tuple(s[d] for s in strides)
        if groups:
            size, last = groups[-1]
            if all(a == b * shape[d] for a, b in zip(last, step)):
                groups[-1] = (size * shape[d], step)
                continue
        groups.append((shape[d], step))
    return groups


def plan(shape, reduced, strides) -> Layout | None:
    """The (outer, red, inner) view of tensors of ``shape`` reduced over the dims in ``reduced``.

    strides: one full-rank stride tuple per tensor (an output that lacks the reduced dims gives them
    stride 0); the first tensor decides the layout. None when the dims do not merge that far.
    """
    ntensors = len(strides)
    zero = (0,) * ntensors
    kept = [d for d in range(len(shape)) if d not in reduced and shape[d] != 1]
    if any(shape[d] == 0 for d in reduced):
        red_groups = [(0, zero)]
    else:
        red_groups = _merge(shape, [d for d in reduced if shape[d] != 1], strides)
        if len(red_groups) > 1:
            return None
    kept_groups = _merge(shape, kept, strides)
    if len(kept_groups) > 2:
        return None
    n_red, red_strides = red_groups[0] if red_groups else (1, zero)
    ones = (1, zero)
    if kept_groups and abs(kept_groups[-1][1][0]) < abs(red_strides[0]):
        cols = True
        (n_outer, outer_strides), (n_inner, inner_strides) = (
            kept_groups if len(kept_groups) == 2 else (ones, kept_groups[0]))
    else:
        cols = False
        padded = kept_groups + [ones] * (2 - len(kept_groups))
        (n_outer, outer_strides), (n_inner, inner_strides) = padded
    return Layout(cols, n_outer, n_red, n_inner,
                  tuple(zip(outer_strides, red_strides, inner_strides)))


# --------------------------------------------------------------------------- configs and plans


_rules: dict = {}


def config(key: str, layout: Layout) -> dict:
    """The vendor's heuristics for ``key`` ("reduction", "softmax") evaluated for this layout."""
    rules = _rules.get(key)
    if rules is None:
        rules = _rules[key] = selection.current().heuristics(key)
    args = {"layout": "cols" if layout.cols else "rows", "n_outer": layout.n_outer, "n_red": layout.n_red,
            "n_inner": layout.n_inner, "n_rows": layout.n_rows}
    for name, rule in rules.items():
        args[name] = rule(args)
    return args


class PlanCache(dict):
    """Launch plans by (shapes, strides, dtypes, arguments): planning costs tens of microseconds of
    Python, a lookup about one. Bounded, for processes that see many shapes."""

    LIMIT = 4096

    def put(self, key, value):
        if len(self) >= self.LIMIT:
            self.clear()
        self[key] = value
        return value


class Launch(NamedTuple):
    """One kernel launch: ``launcher(grid, *tensors, *args, num_warps=num_warps)``."""

    grid: tuple
    args: tuple  # sizes, strides and constexprs, in the kernel's parameter order
    num_warps: int


def program_count(layout: Layout, block_m: int) -> int:
    """Programs along the outputs for BLOCK_M outputs each."""
    if layout.cols:
        return layout.n_outer * cdiv(layout.n_inner, block_m)
    return cdiv(layout.n_rows, block_m)


def contiguous_strides(shape) -> tuple[int, ...]:
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


class SumPlan(NamedTuple):
    shape: list  # the result's shape
    dtype: torch.dtype  # the result's dtype
    order: list | None  # when set, the input is first copied contiguous in this dim order
    launches: tuple  # no launch (empty result), one, or two around a partial buffer
    partial: tuple | None  # (shape, dtype) of the partial results of a split reduction


def _sum_launches(layout: Layout, cast, acc_dtype, allow_split=True):
    """(launches, partial buffer) for a sum over ``layout`` (see the module docstring)."""
    cfg = config("reduction", layout)
    block_m, block_k, warps = cfg["BLOCK_M"], cfg["BLOCK_K"], cfg["num_warps"]
    (sxo, sxk, sxn), (soo, _, son) = layout.strides
    acc = _TL[acc_dtype]
    n_rows, n_inner, n_red = layout.n_rows, layout.n_inner, layout.n_red
    programs = program_count(layout, block_m)
    splits = cfg.get("SPLITS", 1) if allow_split else 1
    if splits > 1:
        per_split = cdiv(cdiv(n_red, splits), block_k) * block_k
        splits = cdiv(n_red, per_split)
    if splits <= 1:
        args = (n_rows, n_inner, n_red, max(n_red, 1), sxo, sxn, sxk, soo, son, 0,
                cast, acc, layout.cols, layout.needs_int64(), block_m, block_k)
        return (Launch((programs, 1), args, warps),), None
    # Pass 1 writes partial[s, o, n] for each split s; pass 2 reduces partial over s into the result.
    args = (n_rows, n_inner, n_red, per_split, sxo, sxn, sxk, n_inner, 1, n_rows,
            cast, acc, layout.cols, layout.needs_int64(splits * n_rows), block_m, block_k)
    if n_rows == 1:
        second = Layout(False, 1, splits, 1, ((0, 1, 0), (0, 0, 0)))
    elif n_inner == 1:
        second = Layout(True, 1, splits, n_rows, ((0, n_rows, 1), (0, 0, soo)))
    else:
        second = Layout(True, layout.n_outer, splits, n_inner, ((n_inner, n_rows, 1), (soo, 0, son)))
    (final,), _ = _sum_launches(second, acc, acc_dtype, allow_split=False)
    return (Launch((programs, splits), args, warps), final), ((splits, n_rows), acc_dtype)


def _sum_plan(x, dim, keepdim, dtype, out) -> SumPlan | None:
    """Check the arguments as ATen does and plan the launches; None for an ``out`` whose strides merge
    in no order (the caller then computes into a fresh tensor and copies)."""
    if x.dtype not in _TL:
        raise Fallback(f"sum of {x.dtype} is not handled by gems")
    if dtype is not None and out is not None and out.dtype != dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {dtype}, but got {out.dtype} instead")
    result_dtype = dtype or (out.dtype if out is not None else
                             x.dtype if x.dtype.is_floating_point else torch.int64)
    if result_dtype not in _TL:
        raise Fallback(f"sum to {result_dtype} is not handled by gems")
    reduced = reduced_dims(x, dim)
    shape = reduced_shape(x.shape, reduced, keepdim)
    if out is not None:
        check_reduction_out(out, x.device, shape)
    if math.prod(shape) == 0:
        return SumPlan(shape, result_dtype, None, (), None)
    # The result's strides as a full-rank tensor: 0 along the reduced dims.
    out_strides = iter(out.stride() if out is not None else contiguous_strides(shape))
    if keepdim:
        full = tuple(0 if d in reduced else s for d, s in enumerate(out_strides))
    else:
        full = tuple(0 if d in reduced else next(out_strides) for d in range(x.dim()))
    order = None
    layout = plan(x.shape, reduced, (x.stride(), full))
    if layout is None:
        # Reduced dims that do not merge: copy to (kept..., reduced...) order, where they do.
        order = [d for d in range(x.dim()) if d not in reduced] + list(reduced)
        copied = [x.shape[d] for d in order]
        layout = plan(copied, range(len(copied) - len(reduced), len(copied)),
                      (contiguous_strides(copied), tuple(full[d] for d in order)))
        if layout is None:
            return None
    launches, partial = _sum_launches(layout, _TL[result_dtype], accumulation_dtype(result_dtype))
    return SumPlan(shape, result_dtype, order, launches, partial)


def _run_sum(p: SumPlan, x, out):
    if p.order is not None:
        x = x.permute(p.order).contiguous()
    if p.partial is None:
        for launch in p.launches:
            _sum_launcher(launch.grid, x, out, *launch.args, num_warps=launch.num_warps)
        return out
    partial = torch.empty(p.partial[0], dtype=p.partial[1], device=x.device)
    first, second = p.launches
    _sum_launcher(first.grid, x, partial, *first.args, num_warps=first.num_warps)
    _sum_launcher(second.grid, partial, out, *second.args, num_warps=second.num_warps)
    return out


_sum_plans = PlanCache()


def _sum(x: torch.Tensor, dim, keepdim: bool, dtype, out):
    if out is None:
        key = (x.shape, x.stride(), x.dtype, dim if dim is None or type(dim) is int else tuple(dim), keepdim,
               dtype)
        p = _sum_plans.get(key) or _sum_plans.put(key, _sum_plan(x, dim, keepdim, dtype, None))
        return _run_sum(p, x, torch.empty(p.shape, dtype=p.dtype, device=x.device))
    p = _sum_plan(x, dim, keepdim, dtype, out)
    if p is None:  # an out= tensor whose strides merge in no order: compute, then copy
        return out.copy_(_sum(x, dim, keepdim, out.dtype, None))
    return _run_sum(p, x, out)


# --------------------------------------------------------------------------- ATen-facing helpers


def wrap_dim(dim: int, ndim: int) -> int:
    """ATen's maybe_wrap_dim: a 0-d tensor accepts dims -1 and 0."""
    bound = max(ndim, 1)
    if not -bound <= dim < bound:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-bound}, {bound - 1}], "
                         f"but got {dim})")
    return dim % bound


def reduced_dims(x: torch.Tensor, dim) -> tuple[int, ...]:
    """The dims a reduction's ``dim`` argument names; None and [] mean all of them."""
    ndim = x.dim()
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, int):
        dim = (dim,)
    if len(dim) == 0:
        return tuple(range(ndim))
    seen = []
    for d in dim:
        d = wrap_dim(d, ndim)
        if d in seen:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        seen.append(d)
    return tuple(seen) if ndim else ()


def reduced_shape(shape, reduced, keepdim: bool) -> list[int]:
    if keepdim:
        return [1 if d in reduced else n for d, n in enumerate(shape)]
    return [n for d, n in enumerate(shape) if d not in reduced]


def check_reduction_out(out: torch.Tensor, device, shape) -> None:
    if out.device != device:
        raise RuntimeError(f"Expected out tensor to have device {device}, but got {out.device} instead")
    if list(out.shape) != shape:
        out.resize_(shape)


# --------------------------------------------------------------------------- ATen overloads


def sum_all(self, *, dtype=None):
    return _sum(self, None, False, dtype, None)


def sum_dim(self, dim, keepdim=False, *, dtype=None):
    return _sum(self, dim, keepdim, dtype, None)


def sum_all_out(self, *, dtype=None, out):
    return _sum(self, None, False, dtype, out)


def sum_dim_out(self, dim, keepdim=False, *, dtype=None, out):
    return _sum(self, dim, keepdim, dtype, out)


def _sum_result_dtype(dtype: torch.dtype) -> torch.dtype:
    return dtype if dtype.is_floating_point else torch.int64


SPECS = [
    OpSpec(
        name="sum", family="reduction",
        impls={"sum": sum_all, "sum.dim_IntList": sum_dim, "sum.out": sum_all_out, "sum.IntList_out": sum_dim_out},
        call=torch.sum,
        samples=reduction_samples(torch.sum, full="sum", dim="sum.dim_IntList", out="sum.IntList_out",
                                  full_out=("sum.out", torch.ops.aten.sum.out), result_dtype=_sum_result_dtype,
                                  dtype_arg=True, grad=True),
        dtypes=FLOATS + INTEGERS + (torch.bool,),
        tolerance="reduction",
        perf=reduction_perf("reduction"),
    ),
]
