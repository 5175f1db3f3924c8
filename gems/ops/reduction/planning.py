"""Layout planning and kernel helpers every reduction-like operator shares (sum, softmax, ...).

Any reduction over a set of dimensions is run on a view (n_outer, n_red, n_inner) taken through the
input's strides, with no copy: the reduced dims merge into one (n_red, stride) when they are
contiguous with one another, the kept dims into at most two groups (outer, inner). Two tile shapes
cover the layouts (one kernel, a constexpr switch):

- "rows": the reduced elements are the closest in memory (``x.sum(-1)`` of a contiguous tensor, a
  full reduction): a program takes BLOCK_M outputs x BLOCK_K reduced elements per step, reads along K.
- "cols": some kept elements are closer in memory than the reduced ones (``x.sum(1)`` of an
  (outer, K, inner) tensor, ``x.t().sum(1)``): a program takes one outer index and BLOCK_M consecutive
  inner outputs, and reads BLOCK_K of them per step, each row of the tile contiguous.

Block sizes come from the vendor's heuristics (``config(key, layout)``).
"""

from __future__ import annotations

from typing import NamedTuple

import torch
import triton
import triton.language as tl

from gems.runtime import selection
from gems.runtime.launch import cdiv
from gems.spec import PerfSpec, lazy

# Offsets past this need 64-bit index math (the margin covers a block past the last element).
INT32_SAFE = 2**31 - 1 - 2**20

TL_DTYPES = {
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
def reduce_min(x, axis: tl.constexpr):
    return tl.reduce(x, axis, tl.standard._elementwise_min)


@triton.jit
def order_key(v, NAN_HIGH: tl.constexpr):
    """fp32 (fp64) v as an int32 (int64) in the same order, -inf < ... < -0.0 < +0.0 < ... < +inf, with every
    NaN, whatever its sign, above everything (NAN_HIGH) or below. One integer max/min over these keys
    replaces a float max plus an "any NaN" reduction (the builtin float combine ignores NaN on the GPU)."""
    if v.dtype == tl.float32:
        bits = v.to(tl.int32, bitcast=True)
        key = bits ^ ((bits >> 31) & 0x7FFFFFFF)
        nan = 0x7FFFFFFF if NAN_HIGH else -0x7FFFFFFF - 1
    else:
        bits = v.to(tl.int64, bitcast=True)
        key = bits ^ ((bits >> 63) & 0x7FFFFFFFFFFFFFFF)
        nan = 0x7FFFFFFFFFFFFFFF if NAN_HIGH else -0x7FFFFFFFFFFFFFFF - 1
    return tl.where(v != v, nan, key)


@triton.jit
def from_order_key(key):
    """The float whose order_key is ``key`` (a NaN key gives a NaN)."""
    if key.dtype == tl.int32:
        return (key ^ ((key >> 31) & 0x7FFFFFFF)).to(tl.float32, bitcast=True)
    else:
        return (key ^ ((key >> 63) & 0x7FFFFFFFFFFFFFFF)).to(tl.float64, bitcast=True)


@triton.jit
def reduce_prod(x, axis: tl.constexpr):
    """The product along ``axis``: warp shuffles when compiled, one numpy call under the interpreter (which
    gems' interpreter_support adds; a tree of reshape/split halvings cost layout conversions on the GPU)."""
    return tl.reduce(x, axis, tl.standard._prod_combine)


@triton.jit
def _halve_extreme(x, IS_MAX: tl.constexpr, BLOCK_M: tl.constexpr, WIDTH: tl.constexpr):
    a, b = tl.split(tl.reshape(x, [BLOCK_M, WIDTH // 2, 2]))
    if IS_MAX:
        return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)
    else:
        return tl.minimum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def halve_extreme(x, IS_MAX: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr, HALVES: tl.constexpr):
    """The NaN-propagating max (min) of each 2**HALVES adjacent elements along axis 1 of a [BLOCK_M, BLOCK_K]
    tile: in-thread and elementwise (a tl.reduce with a NaN-propagating combine runs one Python call per
    element under the interpreter), so that the order-key reduction that follows (order_key) sees a
    2**HALVES times smaller tile. On an H100 at 32768x4096 fp16/bf16 (3 halves, mode "halve" of
    tools/gpu_redperf_variants.py, in git history at ca8e18b): amax 93% of the copy bandwidth against 88%
    for order keys of the whole tile."""
    for i in tl.static_range(HALVES):
        x = _halve_extreme(x, IS_MAX, BLOCK_M, BLOCK_K >> i)
    return x


def halves(layout, block_k: int, itemsize: int) -> int:
    """halve_extreme's HALVES for a tile loaded from ``itemsize``-byte elements: in the rows layout, as many
    as one 16-byte load holds (3 for fp16/bf16, 2 for fp32), so that halving stays within a thread (sm_90
    builds: one more halving adds barriers); none for 8-byte values (more registers, no fewer instructions)
    nor in the cols layout (its tiles are contiguous along axis 0: halving axis 1 would move data)."""
    if layout.cols or itemsize > 4:
        return 0
    return min((16 // itemsize).bit_length() - 1, block_k.bit_length() - 1)


@triton.jit
def tile_k(k, n_red, mask_m, INT64: tl.constexpr, BLOCK_K: tl.constexpr):
    """(offsets, mask) of the reduced elements k ... k + BLOCK_K - 1 below n_red, for the BLOCK_M rows."""
    offs_k = k + tl.arange(0, BLOCK_K)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
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
        return max(max(spans), self.n_rows, self.n_red, extra) > INT32_SAFE


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


def split_layout(layout: Layout, splits: int, out_strides) -> Layout:
    """The second pass of a split reduction: partial results, contiguous (splits, n_outer * n_inner),
    reduced over the splits into an output of (outer, inner) strides ``out_strides``."""
    soo, son = out_strides
    n_rows, n_inner = layout.n_rows, layout.n_inner
    if n_rows == 1:
        return Layout(False, 1, splits, 1, ((0, 1, 0), (0, 0, 0)))
    if n_inner == 1:
        return Layout(True, 1, splits, n_rows, ((0, n_rows, 1), (0, 0, soo)))
    return Layout(True, layout.n_outer, splits, n_inner, ((n_inner, n_rows, 1), (soo, 0, son)))


def split_count(cfg: dict, n_red: int) -> tuple[int, int]:
    """(splits, reduced elements per split) for the vendor's SPLITS rule, whole blocks per split."""
    splits, block_k = cfg.get("SPLITS", 1), cfg["BLOCK_K"]
    if splits <= 1:
        return 1, max(n_red, 1)
    per_split = cdiv(cdiv(n_red, splits), block_k) * block_k
    return cdiv(n_red, per_split), per_split


def result_strides(x_ndim: int, reduced, keepdim: bool, out_strides) -> tuple[int, ...]:
    """A result's strides as a full-rank tensor of the input's rank: 0 along the reduced dims."""
    it = iter(out_strides)
    if keepdim:
        return tuple(0 if d in reduced else s for d, s in enumerate(it))
    return tuple(0 if d in reduced else next(it) for d in range(x_ndim))


def plan_or_permute(shape, reduced, strides, inputs=1):
    """(order, layout): the layout of tensors of ``shape`` (``strides``: one full-rank stride tuple per
    tensor, the ``inputs`` inputs first); when the reduced dims do not merge, order is the (kept...,
    reduced...) dim order the inputs must first be copied contiguous in (the outputs keep their strides).
    A layout of None: the outputs' strides merge in no order (the caller computes into fresh tensors)."""
    layout = plan(shape, reduced, strides)
    if layout is not None:
        return None, layout
    order = [d for d in range(len(shape)) if d not in reduced] + list(reduced)
    copied = [shape[d] for d in order]
    others = tuple(tuple(s[d] for d in order) for s in strides[inputs:])
    return order, plan(copied, range(len(copied) - len(reduced), len(copied)),
                       (*[contiguous_strides(copied)] * inputs, *others))


def contiguous_strides(shape) -> tuple[int, ...]:
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


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
    if out.device != device:  # unreached on the interpreter: one device
        raise RuntimeError(f"Expected out tensor to have device {device}, but got {out.device} instead")
    if list(out.shape) != shape:
        out.resize_(shape)


def reduction_perf(shapes: str = "reductions") -> PerfSpec:
    """The reductions' perf declaration: 2-D shapes reduced over the last dim, 3-D over the middle one
    (inputs from gems.testing, imported on first use)."""
    module = "gems.testing.samples_reduction"
    return PerfSpec(inputs=lazy(module, "dim_perf_inputs"), shapes=shapes, bytes=lazy(module, "dim_perf_bytes"))


def check_nonempty(x: torch.Tensor, dim, name: str, whole_error=RuntimeError) -> None:
    """ATen's errors for a reduction without identity (max, argmax...) over no elements: ``whole_error``
    (RuntimeError, IndexError for argmax/argmin) for a whole-tensor call, IndexError naming the dim for a
    per-dim one."""
    if x.numel():
        return
    if dim is None or (not isinstance(dim, int) and len(dim) == 0):
        raise whole_error(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
    for d in reduced_dims(x, dim):
        if x.shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
