"""fused_rms_norm: the RMS norm of a transformer (Llama's RMSNorm; Gemma's with ``weight_offset=1``) in
one kernel each way, whether or not gems is enabled.

    y = x * rstd * (w + weight_offset),  rstd = 1 / sqrt(mean(x^2) + eps)   over the last dim

computed in fp32 (fp64 for fp64) and rounded once. Hugging Face's RMSNorm modules run it as six ATen
kernels forward (to fp32, pow, mean, add, rsqrt, mul, to, mul) and save fp32 copies for the backward;
here the forward saves x and one fp32 rstd per row, and the backward is one kernel plus dw's column sum
(gems/ops/fused/norms.py). The reference is the composite in fp32 (fp64 for fp64): rms_norm, times
(w + weight_offset), rounded to x's dtype.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from gems.dtypes import FLOATS
from gems.ops.fused.api import api_function
from gems.ops.fused.norms import check_kernel_dtypes, check_residual_norm, residual_norm
from gems.spec import OpSpec, PerfSpec, lazy

NAME = "gems.fused.fused_rms_norm"


def wide(x):
    """The composite's compute dtype: fp32, fp64 for fp64."""
    return torch.promote_types(x.dtype, torch.float32)


def scaled_rms_norm(s, weight, eps, weight_offset):
    """rms_norm(s) * (weight + weight_offset) in the wide dtype, rounded to s's dtype: what the kernel
    computes, in eager PyTorch."""
    y = F.rms_norm(s.to(wide(s)), (s.shape[-1],), eps=eps)
    if weight is not None:
        w = weight.to(wide(s))
        y = y * (w + weight_offset if weight_offset else w)
    return y.to(s.dtype)


def reference(x, weight=None, eps=1e-6, weight_offset=0.0):
    check_residual_norm(NAME, x, None, weight)
    return scaled_rms_norm(x, weight, eps, weight_offset)


def _fused_rms_norm(x, weight=None, eps=1e-6, weight_offset=0.0):
    check_residual_norm(NAME, x, None, weight)
    check_kernel_dtypes(x, weight)
    return residual_norm(x, None, weight, None, eps, rms=True, w_offset=weight_offset)


fused_rms_norm = api_function(
    NAME, _fused_rms_norm, reference, differentiable=True,
    schema="(Tensor x, Tensor? weight=None, float eps=1e-06, float weight_offset=0.0) -> Tensor")

SPECS = [
    OpSpec(
        name="fused_rms_norm", family="fused", impls={}, api={NAME: fused_rms_norm}, reference=reference,
        call=fused_rms_norm,
        samples=lazy("gems.testing.samples_fused", "rms_norm_samples"),
        dtypes=FLOATS,
        tolerance="reduction",
        perf=PerfSpec(inputs=lazy("gems.testing.samples_fused", "rms_norm_inputs"), shapes="fused_norm",
                      bytes=lazy("gems.testing.samples_norm", "io_bytes")),
    ),
]
