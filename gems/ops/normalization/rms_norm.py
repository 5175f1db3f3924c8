"""rms_norm: ``rms_norm`` (torch.nn.functional.rms_norm) as one fused kernel forward and one backward.

    y = x * rstd * w,   rstd = 1 / sqrt(mean(x^2) + eps)   over the last len(normalized_shape) dims

ATen marks rms_norm CompositeImplicitAutograd: left alone it decomposes into five kernels forward
(pow, mean, add, rsqrt, mul...) and more backward. gems registers it with ``Autograd.enable`` (under
Autograd<key>, ahead of the decomposition) as a torch.autograd.Function whose forward and backward
are the row kernels of gems/ops/normalization/rows.py; the backward's dw is one more small kernel that
adds the per-program partial sums. eps=None means the epsilon of the compute dtype, as in ATen (fp32's
for fp16/bf16/fp32 inputs). ATen computes fp16/bf16 as fp32, rounds x * rstd to the input dtype, then
multiplies by w and rounds again; gems rounds once, closer to the float64 oracle.
"""

from __future__ import annotations

import torch
from torch.autograd.function import once_differentiable

from gems.dtypes import FLOATS
from gems.ops.normalization.rows import as_rows, normalized_numel, row_forward
from gems.ops.normalization.rows_backward import row_norm_backward
from gems.runtime.native_backward import Grad, NeedsGrad, Result, Saved, native_backward
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, PerfSpec, lazy


def default_eps(dtype: torch.dtype) -> float:
    return torch.finfo(torch.float64 if dtype == torch.float64 else torch.float32).eps


# backward() below as data, for the native layer's C++ node (gems/runtime/native_backward.py).
@native_backward("gems::row_norm_backward",
                 args=(Grad(0), Saved(0), None, Saved(2), Saved(1), True, NeedsGrad(0), NeedsGrad(1), False),
                 grads=(Result(0), Result(1), None, None))
class _RmsNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, n_cols, eps):
        x2 = as_rows(x, n_cols)
        stats = torch.float64 if x.dtype == torch.float64 else torch.float32
        y, _, _, rstd = row_forward(x2, eps, rms=True, weight=weight, stats_dtype=stats)
        ctx.save_for_backward(x2, weight, rstd)
        ctx.x_shape = x.shape
        return y.view(x.shape)

    @staticmethod
    @once_differentiable  # the backward operator has no backward of its own
    def backward(ctx, grad_y):
        x2, weight, rstd = ctx.saved_tensors
        want_dw = weight is not None and ctx.needs_input_grad[1]
        dx, dw, _ = row_norm_backward(grad_y, x2, None, rstd, weight, True, ctx.needs_input_grad[0], want_dw, False)
        return (dx.view(ctx.x_shape) if dx is not None else None,
                dw.view(weight.shape) if dw is not None else None, None, None)


# --------------------------------------------------------------------------- ATen overloads


def rms_norm(input, normalized_shape, weight=None, eps=None):
    n_cols = normalized_numel(input, normalized_shape, weight, None)
    if input.dtype not in FLOATS:
        raise Fallback(f"rms_norm of {input.dtype} is not handled by gems")
    if weight is not None and weight.dtype != input.dtype:
        raise Fallback("rms_norm with a weight of another dtype than the input is left to ATen")
    if n_cols == 0:
        raise Fallback("rows of zero length")
    return _RmsNorm.apply(input, weight, n_cols, default_eps(input.dtype) if eps is None else eps)


SPECS = [
    OpSpec(
        name="rms_norm", family="normalization",
        impls={"rms_norm": rms_norm},
        autograd_enabled=("rms_norm",),
        call=torch.nn.functional.rms_norm,
        samples=lazy("gems.testing.samples_norm", "rms_norm_samples"),
        dtypes=FLOATS,
        tolerance="reduction",
        perf=PerfSpec(inputs=lazy("gems.testing.samples_norm", "row_norm_inputs", "rms_norm"), shapes="rms_norm",
                      bytes=lazy("gems.testing.samples_norm", "io_bytes")),
    ),
]
