"""batch_norm: ``native_batch_norm`` and ``native_batch_norm_backward`` (what torch.nn.functional.batch_norm
and its autograd reach in eager mode, on CPU and on CUDA when cuDNN is not chosen), and the functional
forms torch.compile and export graphs call: ``_native_batch_norm_legit`` (+ ``.no_stats``),
``_native_batch_norm_legit_no_training`` and ``_batch_norm_with_update``.

x is (N, C, *), seen as (N, C, HxW) through its strides; one program per channel c:

    training: mean, var = biased statistics over (N, HxW) (two sweeps, corrected as in rows.py),
              invstd = 1 / sqrt(var + eps);
              running_mean = (1 - momentum) * running_mean + momentum * mean,
              running_var  = (1 - momentum) * running_var + momentum * var * n / (n - 1)   (in place)
    eval:     mean, invstd from running_mean, running_var
    y = (x - mean) * invstd * w + b
    backward (training): dx = w * invstd * (dy - mean(dy) - xhat * mean(dy * xhat)), xhat = (x - mean) * invstd
             (eval):     dx = dy * w * invstd;   dw = sum(dy * xhat), db = sum(dy)

save_mean / save_invstd come back as ATen's kernel of the device returns them: in the input dtype on
CPU (empty in eval mode), in the accumulate dtype (fp32 for fp16/bf16) on other devices, shape (C,) in
eval mode too (the running mean's copy and 1 / sqrt(running_var + eps)). CUDA's kernel also refuses an
empty input in the (N, C, HxW)-contiguous layout with strides[1] != 1 (it reshapes it to (N, C, -1)).

``_batch_norm_with_update`` on CUDA: ATen takes cuDNN (cudnn_batch_norm) for fp32/fp64 inputs of at least
3 dims with weight, bias and running statistics; cuDNN's saved mean and inverse standard deviation are
these same (C,) statistics in the same dtypes, and its reserve buffer, for batch norm without a fused
activation, has 0 bytes (on H100 ATen's reserve compared equal to the CPU's empty one). gems returns the
statistics and an empty uint8 reserve on every device, so the backward ATen picks (cuDNN's or its own,
which both read save_mean / save_invstd) gets what the forward it expects would have given.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from gems.dtypes import FLOATS
from gems.ops.normalization.rows import compute_dtype, needs_int64
from gems.ops.normalization.statistics import div_n, moments, rsqrt_rn
from gems.ops.reduction.planning import reduce_sum
from gems.runtime.launch import Launcher, next_power_of_2, packed
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, lazy

# (batch, HxW) tiles per channel: 8 x 512 on the GPU (16 fp32 values per thread at 8 warps); larger
# under the interpreter, whose programs run one after another.
GPU_TILE_N, GPU_TILE_HW = 8, 512
INTERP_TILE_N, INTERP_TILE_HW = 64, 2048

# --------------------------------------------------------------------------- kernels


@triton.jit
def _tile(ptr, ns, offs, mask, stride_n, stride_c, stride_h, c, COMPUTE: tl.constexpr):
    at = ptr + ns[:, None] * stride_n + c * stride_c + offs[None, :] * stride_h
    return tl.load(at, mask=mask, other=0).to(COMPUTE)


@triton.jit
def _bn_forward_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr, rmean_ptr, rvar_ptr, smean_ptr, sinv_ptr,
    n_batch, n_channels, hw, stride_xn, stride_xc, stride_xh, momentum, eps,
    TRAINING: tl.constexpr, HAS_W: tl.constexpr, HAS_B: tl.constexpr, HAS_RUNNING: tl.constexpr,
    STORE_SAVE: tl.constexpr, COMPUTE: tl.constexpr, INT64: tl.constexpr, BLOCK_N: tl.constexpr,
    BLOCK_HW: tl.constexpr,
):
    """Channel c = program_id: statistics (training) or running ones (eval), then y (contiguous)."""
    c = tl.program_id(0)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        c = c.to(tl.int64)
    count = n_batch * hw
    if TRAINING:
        acc = tl.full([BLOCK_N, BLOCK_HW], 0, COMPUTE)
        for n0 in range(0, n_batch, BLOCK_N):
            ns = n0 + tl.arange(0, BLOCK_N)
            for k in range(0, hw, BLOCK_HW):
                offs = k + tl.arange(0, BLOCK_HW)
                mask = (ns < n_batch)[:, None] & (offs < hw)[None, :]
                acc += _tile(x_ptr, ns, offs, mask, stride_xn, stride_xc, stride_xh, c, COMPUTE)
        mean = div_n(reduce_sum(reduce_sum(acc, 1), 0), count)
        acc = tl.full([BLOCK_N, BLOCK_HW], 0, COMPUTE)
        acc_d = tl.full([BLOCK_N, BLOCK_HW], 0, COMPUTE)
        for n0 in range(0, n_batch, BLOCK_N):
            ns = n0 + tl.arange(0, BLOCK_N)
            for k in range(0, hw, BLOCK_HW):
                offs = k + tl.arange(0, BLOCK_HW)
                mask = (ns < n_batch)[:, None] & (offs < hw)[None, :]
                d = tl.where(mask, _tile(x_ptr, ns, offs, mask, stride_xn, stride_xc, stride_xh, c, COMPUTE) - mean,
                             0)
                acc += d * d
                acc_d += d
        mean, var = moments(mean, reduce_sum(reduce_sum(acc_d, 1), 0), reduce_sum(reduce_sum(acc, 1), 0), count)
        invstd = rsqrt_rn(tl.full([1], 0, COMPUTE) + var + eps)
        if HAS_RUNNING:
            rm = tl.load(rmean_ptr + c).to(COMPUTE)
            rv = tl.load(rvar_ptr + c).to(COMPUTE)
            tl.store(rmean_ptr + c, ((1 - momentum) * rm + momentum * mean).to(rmean_ptr.dtype.element_ty))
            unbiased = var * count / (count - 1)
            tl.store(rvar_ptr + c, ((1 - momentum) * rv + momentum * unbiased).to(rvar_ptr.dtype.element_ty))
    else:
        mean = tl.load(rmean_ptr + c).to(COMPUTE)
        invstd = rsqrt_rn(tl.full([1], 0, COMPUTE) + tl.load(rvar_ptr + c).to(COMPUTE) + eps)
    if STORE_SAVE:
        tl.store(smean_ptr + c + tl.arange(0, 1), (tl.full([1], 0, COMPUTE) + mean).to(smean_ptr.dtype.element_ty))
        tl.store(sinv_ptr + c + tl.arange(0, 1), invstd.to(sinv_ptr.dtype.element_ty))
    scale = invstd
    if HAS_W:
        scale = scale * tl.load(w_ptr + c).to(COMPUTE)
    shift = tl.full([1], 0, COMPUTE)
    if HAS_B:
        shift = shift + tl.load(b_ptr + c).to(COMPUTE)
    for n0 in range(0, n_batch, BLOCK_N):
        ns = n0 + tl.arange(0, BLOCK_N)
        for k in range(0, hw, BLOCK_HW):
            offs = k + tl.arange(0, BLOCK_HW)
            mask = (ns < n_batch)[:, None] & (offs < hw)[None, :]
            x = _tile(x_ptr, ns, offs, mask, stride_xn, stride_xc, stride_xh, c, COMPUTE)
            y = (x - mean) * scale[:, None] + shift[:, None]
            at = y_ptr + (ns[:, None] * n_channels + c) * hw + offs[None, :]
            tl.store(at, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _bn_backward_kernel(
    dy_ptr, x_ptr, w_ptr, mean_ptr, inv_ptr, dx_ptr, dw_ptr, db_ptr,
    n_batch, n_channels, hw, stride_xn, stride_xc, stride_xh, stride_dyn, stride_dyc, stride_dyh, eps,
    TRAINING: tl.constexpr, HAS_W: tl.constexpr, DX: tl.constexpr, DW: tl.constexpr, DB: tl.constexpr,
    COMPUTE: tl.constexpr, INT64: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_HW: tl.constexpr,
):
    """Channel c = program_id: sums of dy and dy * (x - mean), then dx (contiguous). inv_ptr holds
    invstd in training and the running variance in eval."""
    c = tl.program_id(0)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        c = c.to(tl.int64)
    count = n_batch * hw
    mean = tl.load(mean_ptr + c).to(COMPUTE)
    if TRAINING:
        invstd = tl.load(inv_ptr + c + tl.arange(0, 1)).to(COMPUTE)
    else:
        invstd = rsqrt_rn(tl.load(inv_ptr + c + tl.arange(0, 1)).to(COMPUTE) + eps)
    acc_dy = tl.full([BLOCK_N, BLOCK_HW], 0, COMPUTE)
    acc_dyx = tl.full([BLOCK_N, BLOCK_HW], 0, COMPUTE)
    for n0 in range(0, n_batch, BLOCK_N):
        ns = n0 + tl.arange(0, BLOCK_N)
        for k in range(0, hw, BLOCK_HW):
            offs = k + tl.arange(0, BLOCK_HW)
            mask = (ns < n_batch)[:, None] & (offs < hw)[None, :]
            dy = _tile(dy_ptr, ns, offs, mask, stride_dyn, stride_dyc, stride_dyh, c, COMPUTE)
            x = _tile(x_ptr, ns, offs, mask, stride_xn, stride_xc, stride_xh, c, COMPUTE)
            acc_dy += dy
            acc_dyx += tl.where(mask, dy * (x - mean), 0)
    sum_dy = reduce_sum(reduce_sum(acc_dy, 1), 0)
    sum_dyx = reduce_sum(reduce_sum(acc_dyx, 1), 0)
    if DW:
        tl.store(dw_ptr + c + tl.arange(0, 1), (sum_dyx * invstd).to(dw_ptr.dtype.element_ty))
    if DB:
        tl.store(db_ptr + c + tl.arange(0, 1), (tl.full([1], 0, COMPUTE) + sum_dy).to(db_ptr.dtype.element_ty))
    if DX:
        scale = invstd
        if HAS_W:
            scale = scale * tl.load(w_ptr + c).to(COMPUTE)
        for n0 in range(0, n_batch, BLOCK_N):
            ns = n0 + tl.arange(0, BLOCK_N)
            for k in range(0, hw, BLOCK_HW):
                offs = k + tl.arange(0, BLOCK_HW)
                mask = (ns < n_batch)[:, None] & (offs < hw)[None, :]
                dy = _tile(dy_ptr, ns, offs, mask, stride_dyn, stride_dyc, stride_dyh, c, COMPUTE)
                if TRAINING:
                    x = _tile(x_ptr, ns, offs, mask, stride_xn, stride_xc, stride_xh, c, COMPUTE)
                    proj = (x - mean) * (invstd * invstd * sum_dyx / count)[:, None]
                    dx = (dy - sum_dy / count - proj) * scale[:, None]
                else:
                    dx = dy * scale[:, None]
                at = dx_ptr + (ns[:, None] * n_channels + c) * hw + offs[None, :]
                tl.store(at, dx.to(dx_ptr.dtype.element_ty), mask=mask)


_forward = Launcher(_bn_forward_kernel)
_backward = Launcher(_bn_backward_kernel)


# --------------------------------------------------------------------------- launchers


def _as_nch(x):
    """x (N, C, *) as an (N, C, HxW) view, or a copy where its spatial dims do not merge."""
    n, c = x.shape[0], x.shape[1]
    hw = x.numel() // (n * c) if n * c else 0
    try:
        return x.view(n, c, hw)
    except RuntimeError:
        return x.reshape(n, c, hw)


def _tiles(n, hw):
    interpret = triton.knobs.runtime.interpret
    block_n = min(next_power_of_2(n), INTERP_TILE_N if interpret else GPU_TILE_N)
    block_hw = min(next_power_of_2(hw), INTERP_TILE_HW if interpret else GPU_TILE_HW)
    return block_n, block_hw, 8 if block_n * block_hw >= 4096 else 4


def _check(x, *params):
    if x.dim() < 2:  # ATen reads the channel count, size(1), first
        if x.dim() == 0 and x.device.type != "cuda":  # ATen's CPU kernel fails growing a SmallVector
            raise ValueError("batch norm of a 0-d input: no channel dim (ATen: SmallVector unable to grow)")
        if x.dim() == 0:  # unreached on the interpreter: ATen's CUDA kernel's error (H200, 2026-11-26)
            raise IndexError("Dimension specified as 1 but tensor has no dimensions")
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    if x.dtype not in FLOATS or any(p is not None and p.dtype != x.dtype for p in params):
        raise Fallback("batch norm with parameters or statistics of another dtype (mixed precision) is left to ATen")
    c = x.shape[1]
    if any(p is not None and p.numel() != c for p in params):
        raise Fallback("parameters whose size is not the channel count: ATen's checks apply")


def _save_dtype(x):
    return x.dtype if x.device.type == "cpu" or x.dtype == torch.float64 else torch.float32


def cuda_rejects_empty(x, device_type):
    """CUDA ATen's kernel for the (N, C, HxW)-contiguous layout (contiguous, strides[1] != 1) reshapes x
    to (N, C, -1), which fails for 0 elements; the channels-last and strided kernels do not reshape."""
    return device_type == "cuda" and x.numel() == 0 and x.is_contiguous() and x.stride(1) != 1


def _forward_impl(x, weight, bias, running_mean, running_var, training, momentum, eps):
    _check(x, weight, bias, running_mean, running_var)
    if (running_mean is None) != (running_var is None):
        raise ValueError("running_mean and running_var must either both be None or neither be None")
    if not training and running_mean is None:
        raise Fallback("eval mode without running statistics: ATen's error applies")
    if not training and cuda_rejects_empty(x, x.device.type):  # unreached on the interpreter: CUDA
        raise RuntimeError(f"cannot reshape tensor of 0 elements into shape [{x.shape[0]}, {x.shape[1]}, -1] "
                           "because the unspecified dimension size -1 can be any value and is ambiguous")
    x3 = _as_nch(x)
    n, c, hw = x3.shape
    y = torch.empty((n, c, hw), dtype=x.dtype, device=x.device)
    store_save = training or x.device.type != "cpu"
    size = c if store_save else 0
    save_mean = torch.empty(size, dtype=_save_dtype(x), device=x.device)
    save_invstd = torch.empty(size, dtype=_save_dtype(x), device=x.device)
    if c == 0 or (n * hw == 0 and not training):
        return y.view(x.shape), save_mean, save_invstd
    if n * hw == 0:
        raise Fallback("training statistics of an empty batch")
    block_n, block_hw, warps = _tiles(n, hw)
    weight, bias = packed(weight), packed(bias)
    # running statistics are read and, in training, updated in place: strided ones through packed copies
    stats = [packed(running_mean), packed(running_var)]
    _forward((c,), x3, x if weight is None else weight, x if bias is None else bias, y,
             x if stats[0] is None else stats[0], x if stats[1] is None else stats[1],
             y if size == 0 else save_mean, y if size == 0 else save_invstd,
             n, c, hw, x3.stride(0), x3.stride(1), x3.stride(2), momentum, eps,
             bool(training), weight is not None, bias is not None, running_mean is not None, store_save,
             compute_dtype(x.dtype), needs_int64(x), block_n, block_hw, num_warps=warps)
    for given, used in zip((running_mean, running_var), stats):
        if training and used is not given:
            given.copy_(used)
    return y.view(x.shape), save_mean, save_invstd


# --------------------------------------------------------------------------- ATen overloads


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    return _forward_impl(input, weight, bias, running_mean, running_var, training, momentum, eps)


def native_batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean, save_invstd, train,
                               eps, output_mask):
    _check(input, weight)
    if grad_out.dtype != input.dtype:
        raise Fallback("gradients of another dtype than the input")
    mean, inv = (save_mean, save_invstd) if train else (running_mean, running_var)
    if mean is None or inv is None or mean.numel() != input.shape[1]:
        raise Fallback("the statistics this backward needs are missing")
    if mean.dtype not in (input.dtype, torch.float32) or inv.dtype != mean.dtype:
        raise Fallback("statistics of an unexpected dtype")
    x3, dy3 = _as_nch(input), _as_nch(grad_out)
    n, c, hw = x3.shape
    weight, mean, inv = packed(weight), packed(mean), packed(inv)
    param_dtype = weight.dtype if weight is not None else input.dtype
    dx = torch.empty((n, c, hw), dtype=input.dtype, device=input.device) if output_mask[0] else None
    dw = torch.zeros(c, dtype=param_dtype, device=input.device) if output_mask[1] else None
    db = torch.zeros(c, dtype=param_dtype, device=input.device) if output_mask[2] else None
    if c and n * hw:
        block_n, block_hw, warps = _tiles(n, hw)
        _backward((c,), dy3, x3, x3 if weight is None else weight, mean, inv, x3 if dx is None else dx,
                  x3 if dw is None else dw, x3 if db is None else db, n, c, hw, *x3.stride(), *dy3.stride(), eps,
                  bool(train), weight is not None, dx is not None, dw is not None, db is not None,
                  compute_dtype(input.dtype), needs_int64(input, grad_out), block_n, block_hw, num_warps=warps)
    return dx.view(input.shape) if dx is not None else None, dw, db


def native_batch_norm_legit(input, weight, bias, running_mean, running_var, training, momentum, eps):
    return _forward_impl(input, weight, bias, running_mean, running_var, training, momentum, eps)


def native_batch_norm_legit_no_stats(input, weight, bias, training, momentum, eps):
    return _forward_impl(input, weight, bias, None, None, training, momentum, eps)


def native_batch_norm_legit_no_training(input, weight, bias, running_mean, running_var, momentum, eps):
    return _forward_impl(input, weight, bias, running_mean, running_var, False, momentum, eps)


def batch_norm_with_update(input, weight, bias, running_mean, running_var, momentum, eps):
    y, save_mean, save_invstd = _forward_impl(input, weight, bias, running_mean, running_var, True, momentum, eps)
    return y, save_mean, save_invstd, torch.empty(0, dtype=torch.uint8, device=input.device)


SPECS = [
    OpSpec(
        name="batch_norm", family="normalization",
        impls={"native_batch_norm": native_batch_norm, "native_batch_norm_backward": native_batch_norm_backward,
               "_native_batch_norm_legit": native_batch_norm_legit,
               "_native_batch_norm_legit.no_stats": native_batch_norm_legit_no_stats,
               "_native_batch_norm_legit_no_training": native_batch_norm_legit_no_training,
               "_batch_norm_with_update": batch_norm_with_update},
        call=torch.nn.functional.batch_norm,
        samples=lazy("gems.testing.samples_norm", "batch_norm_samples"),
        dtypes=FLOATS,
        tolerance="reduction",
        # The sample returns the running statistics beside the (empty) outputs: eval mode leaves them as they were.
        no_launch={"eval-empty": "an empty batch in eval mode: nothing to normalize, no statistic to update"},
    ),
]
