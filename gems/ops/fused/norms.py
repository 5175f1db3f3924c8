"""The fused norms' autograd (fused_rms_norm, fused_add_rms_norm, skip_layer_norm): one row kernel
forward and one backward (gems/ops/normalization/rows.py, rows_backward.py), whatever the residual.

    s = x + r             (with a residual; rounded to the input dtype, as the separate add would)
    y = norm(s) * (w + w_offset) + b

Backward: ds_total = dnorm(dy) + ds (the gradient that reaches s directly: in a transformer block s is
also the next residual), computed and added in the one backward kernel; x and r both get ds_total;
dw = sum(dy * shat), db = sum(dy) over rows. Inputs that need no gradient take the forward kernel alone,
without saving statistics.
"""

from __future__ import annotations

import torch
from torch.autograd.function import once_differentiable

from gems.dtypes import FLOATS
from gems.ops.fused.api import needs_grad
from gems.ops.normalization.rows import as_rows, row_forward
from gems.ops.normalization.rows_backward import row_norm_backward
from gems.runtime.native_backward import Attr, Choose, Grad, NeedsGrad, Result, Saved, native_backward
from gems.runtime.registration import Fallback


def check_residual_norm(name, x, residual, weight, bias=None):
    """The shapes both the kernel and the composite accept (ValueError otherwise)."""
    if x.dim() == 0:
        raise ValueError(f"{name}: x must have at least one dimension")
    if residual is not None and residual.shape != x.shape:
        raise ValueError(f"residual of shape {list(residual.shape)} does not match x of shape {list(x.shape)}")
    for label, p in (("weight", weight), ("bias", bias)):
        if p is not None and list(p.shape) != [x.shape[-1]]:
            raise ValueError(f"{label} of shape {list(p.shape)} does not match the last dim of x ({x.shape[-1]})")


def check_kernel_dtypes(x, *others):
    if x.dtype not in FLOATS or any(t is not None and t.dtype != x.dtype for t in others):
        raise Fallback("the kernel takes tensors of one floating dtype")
    if x.shape[-1] == 0:
        raise Fallback("rows of zero length")


def _stats_dtype(x):
    return torch.float64 if x.dtype == torch.float64 else torch.float32


# backward() below as data, for the native layer's C++ node (gems/runtime/native_backward.py).
@native_backward("gems::row_norm_backward",
                 args=(Grad(0), Saved(0), Choose("rms", None, Saved(2)), Saved(3), Saved(1), Attr("rms"),
                       NeedsGrad(0, 1), NeedsGrad(2), NeedsGrad(3), Attr("w_offset"), Grad(1)),
                 grads=(Result(0), Result(0), Result(1), Result(2), None, None, None),
                 undefined={0: (Grad(1), Grad(1), None, None, None, None, None)})
class _ResidualNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, residual, weight, bias, eps, rms, w_offset):
        n = x.shape[-1]
        r2 = as_rows(residual, n) if residual is not None else None
        x2 = as_rows(x, n)
        y, s, mean, rstd = row_forward(x2, eps, rms=rms, weight=weight, bias=bias, residual=r2,
                                       stats_dtype=_stats_dtype(x), w_offset=w_offset)
        ctx.save_for_backward(x2 if s is None else s, weight, mean, rstd)
        ctx.rms, ctx.w_offset, ctx.shape, ctx.has_residual = rms, w_offset, x.shape, residual is not None
        ctx.set_materialize_grads(False)  # an unused output (s) gets no gradient buffer of zeros
        if s is None:
            return y.view(x.shape)
        return y.view(x.shape), s.view(x.shape)

    @staticmethod
    @once_differentiable  # the backward operator has no backward of its own
    def backward(ctx, grad_y, grad_s=None):
        normed, weight, mean, rstd = ctx.saved_tensors
        want_x, want_r, want_w, want_b = ctx.needs_input_grad[:4]
        if grad_y is None:  # only s was used
            return grad_s, grad_s if want_r else None, None, None, None, None, None
        dx, dw, db = row_norm_backward(grad_y, normed, None if ctx.rms else mean, rstd, weight, ctx.rms,
                                       want_x or want_r, want_w and weight is not None, want_b, ctx.w_offset, grad_s)
        dx = dx.view(ctx.shape) if dx is not None else None
        return (dx if want_x else None, dx if want_r else None, dw, db, None, None, None)


def residual_norm(x, residual, weight, bias, eps, *, rms, w_offset=0.0):
    """y, or (y, s) with a residual, through the kernels (checked by the caller)."""
    if needs_grad(x, residual, weight, bias):
        return _ResidualNorm.apply(x, residual, weight, bias, eps, rms, w_offset)
    n = x.shape[-1]
    y, s, _, _ = row_forward(as_rows(x, n), eps, rms=rms, weight=weight, bias=bias,
                             residual=as_rows(residual, n) if residual is not None else None, w_offset=w_offset)
    return y.view(x.shape) if s is None else (y.view(x.shape), s.view(x.shape))
