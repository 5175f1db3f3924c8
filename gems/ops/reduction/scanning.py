"""What the scans (cumsum.py, cummax.py, cummin.py) share: their layout and, for cummax and cummin,
one kernel.

A scan along ``dim`` is run on the (n_outer, n_red, n_inner) view of gems/ops/reduction/planning.py,
the result (same shape as the input) written in the same view: the "rows" tile when the scanned dim
is the closest in memory, the "cols" tile otherwise. A program takes BLOCK_M rows and walks them in
steps of BLOCK_K elements, scanning each step in registers and carrying each row's running result
into the next step: one read and one write of every element, whatever the row length. Block sizes
come from the vendor's heuristics, key "reduction" (a scan row is a reduction row that also writes).

cummax and cummin follow ATen's CPU and CUDA kernels: an element replaces the running extreme when it
is NaN, or when neither is NaN and it is >= (cummax) or <= (cummin) it; so NaN propagates with the
index of the latest NaN, and ties (-0.0 and +0.0 among them) take the latest index and its value.

Their kernel turns both into one running max of integer keys: each element's order key (planning.
order_key, with -0.0 taken as +0.0, every NaN above everything; bitwise-inverted for cummin), so that
an element "replaces" the running extreme exactly when its key is >= the running key. Elements of at
most 16 bits pack (key, position, raw bits) into one int64 whose running max is the answer: the later
position wins ties, and the raw bits give back the value as it was (-0.0, the NaN's payload). Wider
ones take two running maxes (the keys, then the latest position whose key equals the running key)
and read each result's value back from its position (in cache: it was just loaded). A running max is
a builtin-combine scan, which the compiled kernel does with warp shuffles and the interpreter with
one numpy call (interpreter_support); a (value, index) combine would run as Python per element.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
import triton
import triton.language as tl

from gems.dtypes import ALL
from gems.ops.reduction.planning import (
    TL_DTYPES,
    Layout,
    PlanCache,
    config,
    contiguous_strides,
    order_key,
    output_coords,
    plan,
    program_count,
    reduce_max,
    tile_k,
    wrap_dim,
)
from gems.runtime.launch import Launcher
from gems.runtime.registration import Fallback

# Positions below 2**31 fit a packed key (16 key bits, 31 position bits, 16 raw bits: 63); longer rows
# and wider elements take the two-scan form. A GPU timing (tools/scanperf_bench.py, in git history at
# ca8e18b) set it to 0 to time the two-scan form on fp16/bf16 as well.
PACK_MAX_BITS = 16
PACK_MAX_LEN = 2**31

# --------------------------------------------------------------------------- kernels


@triton.jit
def _running_max(key, carry):
    """Inclusive running max along axis 1 of a [BLOCK_M, BLOCK_K] tile, from each row's carry."""
    return tl.maximum(tl.associative_scan(key, 1, tl.standard._elementwise_max), carry[:, None])


@triton.jit
def _packed_key(b, offs_k, MAX: tl.constexpr, NAN_BITS: tl.constexpr, SIGNED: tl.constexpr):
    """int64 (16-bit order key, position, raw bits) of elements of at most 16 bits, ``b`` their bits as
    loaded (int8/int16/uint8 views) widened to int32. NAN_BITS: the float's +inf bits (0x7C00 fp16,
    0x7F80 bf16; 0 for integers); SIGNED: integers to shift by 2**15."""
    raw = b & 0xFFFF
    if NAN_BITS:
        # Unsigned float order: negatives (sign set, not -0.0) below, reversed; -0.0 lands on +0.0.
        key = tl.where(raw > 0x8000, 0xFFFF - raw, raw | 0x8000)
    elif SIGNED:
        key = b + 0x8000
    else:
        key = b
    if not MAX:
        key = 0xFFFF - key
    if NAN_BITS:
        key = tl.where((raw & 0x7FFF) > NAN_BITS, 0xFFFF, key)  # every NaN above everything
    return (key.to(tl.int64) << 47) | (offs_k.to(tl.int64) << 16) | raw.to(tl.int64)


@triton.jit
def _wide_key(x, MAX: tl.constexpr):
    """int32/int64 key of wider elements (fp16/bf16 too, in the two-scan form), in the running order."""
    if x.dtype.is_floating():
        if x.dtype == tl.float16 or x.dtype == tl.bfloat16:
            x = x.to(tl.float32)  # exact (the interpreter has no bf16 arithmetic)
        x = tl.where(x == 0, 0.0, x)  # -0.0 ties with +0.0
        key = order_key(x, MAX)  # NaN above (cummax) or below (cummin, then inverted)
    elif x.dtype.primitive_bitwidth == 64:
        key = x.to(tl.int64)
    else:
        key = x.to(tl.int32)
    if not MAX:
        key = ~key  # reverses the order
    return key


@triton.jit
def _cum_extreme_kernel(
    x_ptr, values_ptr, indices_ptr,
    n_rows, n_inner, n_red, key_low,
    stride_xo, stride_xk, stride_xn,
    stride_vo, stride_vk, stride_vn,
    stride_io, stride_ik, stride_in,
    MAX: tl.constexpr, PACK: tl.constexpr, NAN_BITS: tl.constexpr, SIGNED: tl.constexpr,
    KEY: tl.constexpr, COLS: tl.constexpr, INT64: tl.constexpr, MULTI_STEP: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr,
):
    """values[o, k, n], indices[o, k, n] = the extreme of x[o, :k+1, n] and where it is (see the module
    docstring for NaN and ties), for the BLOCK_M (o, n) rows of this program, in steps of BLOCK_K with
    each row's running key carried. PACK: one packed scan (x, values as integer views of <= 16 bits);
    else two scans of KEY (int32/int64) keys and the values read back from their positions; key_low:
    the lowest KEY (the carry before a row's first element)."""
    pid = tl.program_id(0)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        pid = pid.to(tl.int64)
    outer, inner, mask_m = output_coords(pid, n_rows, n_inner, COLS, BLOCK_M)
    x_rows = x_ptr + outer * stride_xo + inner * stride_xn
    v_rows = values_ptr + outer * stride_vo + inner * stride_vn
    i_rows = indices_ptr + outer * stride_io + inner * stride_in
    if PACK:
        carry = tl.full([BLOCK_M], -1, tl.int64)  # below every packed key
    else:
        carry = tl.full([BLOCK_M], key_low, KEY)
        carry_idx = tl.full([BLOCK_M], -1, tl.int64)
    for k in range(0, n_red, BLOCK_K):
        offs_k, mask = tile_k(k, n_red, mask_m, INT64, BLOCK_K)
        x = tl.load(x_rows[:, None] + offs_k[None, :] * stride_xk, mask=mask, other=0)
        if PACK:
            key = tl.where(mask, _packed_key(x.to(tl.int32), offs_k[None, :], MAX, NAN_BITS, SIGNED), -1)
            run = _running_max(key, carry)
            idx = (run >> 16) & 0x7FFFFFFF
            value = (run & 0xFFFF).to(values_ptr.dtype.element_ty)  # the low bits of the integer view
        else:
            key = tl.where(mask, _wide_key(x, MAX), carry[:, None])
            run = _running_max(key, carry)
            # The latest position whose element set or tied the running key (later lanes are not below it).
            hit = tl.where(mask & (key == run), offs_k[None, :].to(tl.int64), -1)
            idx = _running_max(hit, carry_idx)
            value = tl.load(x_rows[:, None] + idx * stride_xk, mask=mask, other=0)
            if MULTI_STEP:
                carry_idx = reduce_max(idx, 1)
        tl.store(v_rows[:, None] + offs_k[None, :] * stride_vk, value, mask=mask)
        tl.store(i_rows[:, None] + offs_k[None, :] * stride_ik, idx, mask=mask)
        if MULTI_STEP:  # (a row that fits one step, the common case, needs no carry: one reduction less)
            carry = reduce_max(run, 1)


_extreme_launcher = Launcher(_cum_extreme_kernel)

# --------------------------------------------------------------------------- plans


def scan_layout(shape, dim, strides) -> tuple[Layout, bool]:
    """(layout, copy) of a scan along ``dim`` over tensors of ``shape`` with these strides (inputs
    first, then the results); copy: no view merges that way, so the inputs are to be copied contiguous
    first and the results are fresh contiguous tensors."""
    reduced = (dim,) if len(shape) else ()
    layout = plan(shape, reduced, strides)
    if layout is not None:
        return layout, False
    return plan(shape, reduced, [contiguous_strides(shape)] * len(strides)), True


class ExtremePlan(NamedTuple):
    copy: bool
    view: torch.dtype | None  # the integer view x and values are read and written through (packed form)
    grid: tuple
    args: tuple
    num_warps: int


# NAN_BITS of the packed form: a float's +inf bits (above them, NaN); 0 for integers.
_INF_BITS = {torch.float16: 0x7C00, torch.bfloat16: 0x7F80}
_VIEWS = {1: torch.int8, 2: torch.int16}


def _extreme_plan(x, dim, is_max) -> ExtremePlan:
    if x.dtype not in ALL:
        raise Fallback(f"cummax/cummin of {x.dtype} is not handled by gems")
    if x.numel() == 0:  # nothing to launch (and the vendor's block-size rules may divide by a zero length);
        return ExtremePlan(False, None, (0,), (), 1)  # ATen checks no dim of an empty tensor either
    dim = wrap_dim(dim, x.dim())
    out = contiguous_strides(x.shape)
    layout, copy = scan_layout(x.shape, dim, [x.stride(), out, out])
    cfg = config("reduction", layout)
    block_m, block_k = cfg["BLOCK_M"], cfg["BLOCK_K"]
    size = x.element_size()
    pack = size * 8 <= PACK_MAX_BITS and layout.n_red < PACK_MAX_LEN
    # bool and uint8 read as unsigned bytes (bool: its 0/1 bytes, no int1 arithmetic), the rest as signed.
    view = (torch.uint8 if x.dtype in (torch.bool, torch.uint8) else _VIEWS[size]) if pack else None
    if not pack and x.dtype == torch.bool:
        view = torch.uint8
    key = torch.int64 if size == 8 else torch.int32
    args = (layout.n_rows, layout.n_inner, layout.n_red, -(2 ** (key.itemsize * 8 - 1)),
            *(s for per in layout.strides for s in per), is_max, pack, _INF_BITS.get(x.dtype, 0),
            view is not None and view.is_signed, TL_DTYPES[key], layout.cols, layout.needs_int64(),
            layout.n_red > block_k, block_m, block_k)
    return ExtremePlan(copy, view, (program_count(layout, block_m),), args, cfg["num_warps"])


_extreme_plans = PlanCache()


def cumulative_extreme(x: torch.Tensor, dim: int, is_max: bool):
    """(values, indices) of cummax (is_max) or cummin of ``x`` along ``dim``."""
    key = (x.shape, x.stride(), x.dtype, dim, is_max)
    p = _extreme_plans.get(key) or _extreme_plans.put(key, _extreme_plan(x, dim, is_max))
    values = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    indices = torch.empty(x.shape, dtype=torch.int64, device=x.device)
    if x.numel() == 0:
        return values, indices
    if p.copy:
        x = x.contiguous()
    if p.view is not None:
        x, values_view = x.view(p.view), values.view(p.view)
    else:
        values_view = values
    _extreme_launcher(p.grid, x, values_view, indices, *p.args, num_warps=p.num_warps)
    return values, indices
