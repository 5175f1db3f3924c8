"""softmax: ``_softmax`` and ``_softmax_backward_data`` (what torch.softmax, F.softmax and their
autograd reach), so that training runs gems kernels both ways. The kernels also serve the rest of the
family (log_softmax.py, safe_softmax.py) through a MODE constexpr:

    softmax       y  = exp(x - max(x)) / sum(exp(x - max(x)))      along dim
                  dx = y * (dy - sum(dy * y))   (on CUDA in ATen's form there, p - y * sum(p) with p = dy * y
                                                 rounded to dy's dtype: the same value, other zero signs)
    log_softmax   y  = x - max(x) - log(sum(exp(x - max(x))))
                  dx = dy - exp(y) * sum(dy)
    safe_softmax  softmax, but 0 where the whole row is -inf (ATen gives NaN for softmax there)

The tensor is viewed as (n_outer, n_red, n_inner) through its strides, as in gems/ops/reduction/planning.py:
the "rows" tile when the softmax dim is the closest in memory (the last dim of a contiguous tensor),
the "cols" tile when other elements are (any other dim). A row of up to BLOCK_K elements is loaded
once (read x, write y). Longer rows take the online form: one sweep keeps, per tile lane, a running
maximum and a sum rescaled whenever the maximum grows; a second sweep writes y. The backward is
likewise one pass or two sweeps (the dot product first). fp16/bf16 compute in fp32. Block sizes come
from the vendor's heuristics, key "softmax". Both kernels take a runtime ``scale`` (1 for the ATen
overloads): gems.fused.scaled_softmax_forward / _backward (gems/ops/fused/) are softmax(scale * x) and
scale times its input gradient.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from gems.dtypes import FLOATS
from gems.ops.reduction.planning import (
    Launch,
    PlanCache,
    config,
    contiguous_strides,
    output_coords,
    plan,
    program_count,
    reduce_max,
    reduce_sum,
    tile_k,
    wrap_dim,
)
from gems.runtime.launch import Launcher
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, PerfSpec, lazy

# The kernels' MODE: which member of the family they compute.
SOFTMAX, LOG_SOFTMAX, SAFE_SOFTMAX = 0, 1, 2
_NAMES = {SOFTMAX: "softmax", LOG_SOFTMAX: "log_softmax", SAFE_SOFTMAX: "safe_softmax"}
# The dtype CUDA ATen's softmax backward stores dy * y in (the gradient's).
_TL_DTYPES = {torch.float16: tl.float16, torch.bfloat16: tl.bfloat16, torch.float32: tl.float32,
              torch.float64: tl.float64}

# --------------------------------------------------------------------------- kernels


@triton.jit
def _finish(x, row_max, denom, MODE: tl.constexpr):
    """y from x, the row's maximum and sum(exp(x - max)) (all [BLOCK_M, 1]-broadcastable)."""
    if MODE == 1:
        # libdevice's log is correctly rounded to an ulp; the max element's log-probability is -log(denom),
        # close to 0, where an approximate log would lose all relative accuracy.
        return (x - row_max) - libdevice.log(denom)
    else:
        y = tl.exp(x - row_max) / denom
        if MODE == 2:
            y = tl.where(row_max == float("-inf"), 0.0, y)
        return y


@triton.jit
def _load_scaled(ptrs, mask, scale, COMPUTE: tl.constexpr):
    """scale * x (scale is 1 but for gems.fused.scaled_softmax_forward), -inf outside the row."""
    x = tl.load(ptrs, mask=mask, other=0).to(COMPUTE)
    return tl.where(mask, x * scale, float("-inf"))


@triton.jit
def _softmax_kernel(
    x_ptr, y_ptr, scale,
    n_rows, n_inner, n_red,
    stride_xo, stride_xk, stride_xn,
    stride_yo, stride_yk, stride_yn,
    COMPUTE: tl.constexpr, MODE: tl.constexpr, COLS: tl.constexpr, INT64: tl.constexpr, ONE_PASS: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr,
):
    """y[o, :, n] = softmax(scale * x[o, :, n]) (or its MODE's relative) for the BLOCK_M (o, n) rows of this
    program."""
    pid = tl.program_id(0)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        pid = pid.to(tl.int64)
    outer, inner, mask_m = output_coords(pid, n_rows, n_inner, COLS, BLOCK_M)
    x_rows = x_ptr + outer * stride_xo + inner * stride_xn
    y_rows = y_ptr + outer * stride_yo + inner * stride_yn
    if ONE_PASS:
        offs_k, mask = tile_k(0, n_red, mask_m, INT64, BLOCK_K)
        x = _load_scaled(x_rows[:, None] + offs_k[None, :] * stride_xk, mask, scale, COMPUTE)
        # An all -inf row gives exp(-inf - -inf) = NaN, as in ATen.
        row_max = reduce_max(x, 1)[:, None]
        denom = reduce_sum(tl.exp(x - row_max), 1)[:, None]
        y = _finish(x, row_max, denom, MODE)
        tl.store(y_rows[:, None] + offs_k[None, :] * stride_yk, y.to(y_ptr.dtype.element_ty), mask=mask)
    else:
        run_max = tl.full([BLOCK_M, BLOCK_K], float("-inf"), COMPUTE)
        run_sum = tl.full([BLOCK_M, BLOCK_K], 0, COMPUTE)
        for k in range(0, n_red, BLOCK_K):
            offs_k, mask = tile_k(k, n_red, mask_m, INT64, BLOCK_K)
            x = _load_scaled(x_rows[:, None] + offs_k[None, :] * stride_xk, mask, scale, COMPUTE)
            new_max = tl.maximum(run_max, x)
            # A lane that has seen only -inf keeps a zero sum (exp(-inf - -inf) would be NaN).
            shift = tl.where(new_max == float("-inf"), 0.0, new_max)
            run_sum = run_sum * tl.exp(run_max - shift) + tl.exp(x - shift)
            run_max = new_max
        row_max = reduce_max(run_max, 1)[:, None]
        # Lanes are rescaled to the row's maximum; an all -inf row makes this NaN, as in ATen.
        denom = reduce_sum(run_sum * tl.exp(run_max - row_max), 1)[:, None]
        for k in range(0, n_red, BLOCK_K):
            offs_k, mask = tile_k(k, n_red, mask_m, INT64, BLOCK_K)
            x = _load_scaled(x_rows[:, None] + offs_k[None, :] * stride_xk, mask, scale, COMPUTE)
            y = _finish(x, row_max, denom, MODE)
            tl.store(y_rows[:, None] + offs_k[None, :] * stride_yk, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _backward_term(y, dy, LOG: tl.constexpr, PRODUCT_FIRST: tl.constexpr, GRAD_DTYPE: tl.constexpr):
    """The per-element term summed along the row: dy * y (softmax; rounded to the gradient's dtype in
    the PRODUCT_FIRST form, as CUDA ATen's separate multiplication stores it), dy (log_softmax)."""
    if LOG:
        return dy
    elif PRODUCT_FIRST and GRAD_DTYPE is not None:
        return (dy * y).to(GRAD_DTYPE).to(y.dtype)
    else:
        return dy * y


@triton.jit
def _backward_finish(y, dy, total, LOG: tl.constexpr, PRODUCT_FIRST: tl.constexpr, GRAD_DTYPE: tl.constexpr):
    """dx. Both softmax forms are y * dy - y * total in exact arithmetic; they differ in the sign of a zero
    where y is 0 (an underflowed probability): CPU ATen's y * (dy - total) is -0 where dy < total, CUDA
    ATen's round(dy * y) - y * total is -0 only where dy < 0 < total."""
    if LOG:
        return dy - tl.exp(y) * total
    elif PRODUCT_FIRST:
        return _backward_term(y, dy, LOG, PRODUCT_FIRST, GRAD_DTYPE) - y * total
    else:
        return y * (dy - total)


@triton.jit
def _softmax_backward_kernel(
    y_ptr, dy_ptr, dx_ptr, scale,
    n_rows, n_inner, n_red,
    stride_yo, stride_yk, stride_yn,
    stride_dyo, stride_dyk, stride_dyn,
    stride_dxo, stride_dxk, stride_dxn,
    COMPUTE: tl.constexpr, LOG: tl.constexpr, COLS: tl.constexpr, INT64: tl.constexpr, ONE_PASS: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr, PRODUCT_FIRST: tl.constexpr, GRAD_DTYPE: tl.constexpr,
):
    """dx[o, :, n] = y * (dy - sum(dy * y)), or dy - exp(y) * sum(dy) when LOG, for the BLOCK_M (o, n) rows
    (PRODUCT_FIRST: in CUDA ATen's form, see _backward_finish), times scale (1 but for
    gems.fused.scaled_softmax_backward)."""
    pid = tl.program_id(0)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        pid = pid.to(tl.int64)
    outer, inner, mask_m = output_coords(pid, n_rows, n_inner, COLS, BLOCK_M)
    y_rows = y_ptr + outer * stride_yo + inner * stride_yn
    dy_rows = dy_ptr + outer * stride_dyo + inner * stride_dyn
    dx_rows = dx_ptr + outer * stride_dxo + inner * stride_dxn
    if ONE_PASS:
        offs_k, mask = tile_k(0, n_red, mask_m, INT64, BLOCK_K)
        y = tl.load(y_rows[:, None] + offs_k[None, :] * stride_yk, mask=mask, other=0).to(COMPUTE)
        dy = tl.load(dy_rows[:, None] + offs_k[None, :] * stride_dyk, mask=mask, other=0).to(COMPUTE)
        total = reduce_sum(_backward_term(y, dy, LOG, PRODUCT_FIRST, GRAD_DTYPE), 1)
        dx = _backward_finish(y, dy, total[:, None], LOG, PRODUCT_FIRST, GRAD_DTYPE)
        tl.store(dx_rows[:, None] + offs_k[None, :] * stride_dxk, (dx * scale).to(dx_ptr.dtype.element_ty),
                 mask=mask)
    else:
        acc = tl.full([BLOCK_M, BLOCK_K], 0, COMPUTE)
        for k in range(0, n_red, BLOCK_K):
            offs_k, mask = tile_k(k, n_red, mask_m, INT64, BLOCK_K)
            y = tl.load(y_rows[:, None] + offs_k[None, :] * stride_yk, mask=mask, other=0).to(COMPUTE)
            dy = tl.load(dy_rows[:, None] + offs_k[None, :] * stride_dyk, mask=mask, other=0).to(COMPUTE)
            acc += _backward_term(y, dy, LOG, PRODUCT_FIRST, GRAD_DTYPE)
        total = reduce_sum(acc, 1)
        for k in range(0, n_red, BLOCK_K):
            offs_k, mask = tile_k(k, n_red, mask_m, INT64, BLOCK_K)
            y = tl.load(y_rows[:, None] + offs_k[None, :] * stride_yk, mask=mask, other=0).to(COMPUTE)
            dy = tl.load(dy_rows[:, None] + offs_k[None, :] * stride_dyk, mask=mask, other=0).to(COMPUTE)
            dx = _backward_finish(y, dy, total[:, None], LOG, PRODUCT_FIRST, GRAD_DTYPE)
            tl.store(dx_rows[:, None] + offs_k[None, :] * stride_dxk, (dx * scale).to(dx_ptr.dtype.element_ty),
                 mask=mask)


_forward_launcher = Launcher(_softmax_kernel)
_backward_launcher = Launcher(_softmax_backward_kernel)


# --------------------------------------------------------------------------- plans


class SoftmaxPlan(NamedTuple):
    dtype: torch.dtype  # the result's dtype
    copy: bool  # inputs whose dims merge in no order are copied contiguous first
    launch: Launch | None  # None for an empty tensor


def _plan(tensors, dim, dtype, mode) -> SoftmaxPlan:
    """The launch for same-shape ``tensors`` (inputs first, then the fresh contiguous result of ``dtype``);
    the first one decides between the rows and cols tiles. mode: the forward's MODE or the backward's LOG."""
    shape = tensors[0].shape
    if tensors[0].numel() == 0:
        return SoftmaxPlan(dtype, False, None)
    reduced = (dim,) if len(shape) else ()
    strides = [t.stride() for t in tensors[:-1]] + [contiguous_strides(shape)]
    layout = plan(shape, reduced, strides)
    copy = layout is None
    if copy:
        layout = plan(shape, reduced, [contiguous_strides(shape)] * len(tensors))
    cfg = config("softmax", layout)
    block_m, block_k = cfg["BLOCK_M"], cfg["BLOCK_K"]
    compute = tl.float64 if torch.float64 in (tensors[0].dtype, dtype) else tl.float32
    args = (layout.n_rows, layout.n_inner, layout.n_red, *(s for per in layout.strides for s in per),
            compute, mode, layout.cols, layout.needs_int64(), block_k >= layout.n_red, block_m, block_k)
    return SoftmaxPlan(dtype, copy, Launch((program_count(layout, block_m),), args, cfg["num_warps"]))


def check_half_to_float(x, dim, mode):
    """ATen's rules for half_to_float (which depend on the device, so they run before the plan cache):
    CPU refuses the conversion; other devices take fp16 only."""
    wrap_dim(dim, x.dim())  # a bad dim is reported first
    if x.device.type == "cpu":
        raise RuntimeError(f"{_NAMES[mode]} with half to float conversion is not supported on CPU")
    if x.dtype != torch.float16:  # unreached on the interpreter: the CPU refuses the conversion first
        raise RuntimeError("conversion is supported for Half type only")


def _forward_plan(x, dim, dtype, mode) -> SoftmaxPlan:
    if x.dtype not in FLOATS:
        raise Fallback(f"{_NAMES[mode]} of {x.dtype} is not handled by gems")
    dim = wrap_dim(dim, x.dim())
    return _plan([x, x], dim, dtype, mode)


def _backward_plan(grad_output, output, dim, input_dtype, log, product_first, round_product) -> SoftmaxPlan:
    name = _NAMES[LOG_SOFTMAX if log else SOFTMAX]
    if grad_output.shape != output.shape:
        raise RuntimeError(
            f"Expected tensor for argument #1 'grad' to have same size as tensor for argument #2 'output'; but "
            f"{list(grad_output.shape)} does not equal {list(output.shape)} (while checking arguments for "
            f"{name}_backward)")
    dim = wrap_dim(dim, grad_output.dim())
    dtype = grad_output.dtype
    if dtype not in FLOATS or output.dtype != dtype:
        raise Fallback(f"{name} backward of {dtype} gradients and {output.dtype} outputs is not handled by gems")
    p = _plan([output, grad_output, output], dim, input_dtype, log)
    if p.launch is None:
        return p
    rounding = _TL_DTYPES[grad_output.dtype] if round_product else None
    return p._replace(launch=p.launch._replace(args=p.launch.args + (product_first, rounding)))


def _check_backward_dtypes(grad_output, input_dtype):
    """Gradients of another dtype than the input: only CUDA's fp32 gradients of an fp16 input compute
    (autocast); ATen gives the others (every one on CPU) its own errors. Device-dependent, so this runs
    before the plan cache."""
    if grad_output.device.type == "cpu" or (grad_output.dtype, input_dtype) != (torch.float32, torch.float16):
        raise Fallback(f"softmax backward to {input_dtype} from {grad_output.dtype} gradients is left to ATen")


_forward_plans = PlanCache()
_backward_plans = PlanCache()


def forward(x, dim, dtype, mode, scale=1.0):
    """The MODE member of the family of ``scale * x`` along ``dim``, as a new contiguous tensor of ``dtype``
    (x's dtype, or a wider one: each element is converted exactly before any arithmetic)."""
    key = (x.shape, x.stride(), x.dtype, dim, dtype, mode)
    p = _forward_plans.get(key) or _forward_plans.put(key, _forward_plan(x, dim, dtype, mode))
    out = torch.empty(x.shape, dtype=p.dtype, device=x.device)
    if p.launch is not None:
        if p.copy:
            x = x.contiguous()
        _forward_launcher(p.launch.grid, x, out, scale, *p.launch.args, num_warps=p.launch.num_warps)
    return out


def backward(grad_output, output, dim, input_dtype, log, aten_device=None, scale=1.0, round_product=True):
    """scale times the input gradient of softmax (log=False) or log_softmax (log=True) from its output, with
    the zero signs of the ATen kernel of ``aten_device`` (a device type; the tensors' by default): CUDA's
    or CPU's. round_product=False keeps CUDA's dy * y in fp32 (gems.fused.scaled_softmax_backward)."""
    if input_dtype != grad_output.dtype:
        _check_backward_dtypes(grad_output, input_dtype)
    product_first = not log and (aten_device or grad_output.device.type) == "cuda"
    key = (grad_output.shape, grad_output.stride(), output.shape, output.stride(), grad_output.dtype, output.dtype,
           dim, input_dtype, log, product_first, round_product)
    p = _backward_plans.get(key) or _backward_plans.put(
        key, _backward_plan(grad_output, output, dim, input_dtype, log, product_first, round_product))
    grad_input = torch.empty(grad_output.shape, dtype=p.dtype, device=grad_output.device)
    if p.launch is not None:
        if p.copy:
            output, grad_output = output.contiguous(), grad_output.contiguous()
        _backward_launcher(p.launch.grid, output, grad_output, grad_input, scale, *p.launch.args,
                           num_warps=p.launch.num_warps)
    return grad_input


# --------------------------------------------------------------------------- ATen overloads


def softmax(self, dim, half_to_float):
    if half_to_float:
        check_half_to_float(self, dim, SOFTMAX)
    return forward(self, dim, torch.float32 if half_to_float else self.dtype, SOFTMAX)


def softmax_backward(grad_output, output, dim, input_dtype):
    return backward(grad_output, output, dim, input_dtype, False)


# Rows of the last dim; bytes: the input read and the result written once.
PERF = PerfSpec(inputs=lazy("gems.testing.samples_softmax", "rows_perf_inputs"), shapes="softmax_family",
                bytes=lazy("gems.testing.samples_softmax", "io_bytes"))

SPECS = [
    OpSpec(
        name="softmax", family="normalization",
        impls={"_softmax": softmax, "_softmax_backward_data": softmax_backward},
        call=torch.softmax,
        samples=lazy("gems.testing.samples_softmax", "softmax_family_samples", "_softmax", "_softmax_backward_data",
                     torch.ops.aten._softmax.default, torch.ops.aten._softmax_backward_data.default),
        dtypes=FLOATS,
        tolerance="reduction",
        perf=PERF,
    ),
]
