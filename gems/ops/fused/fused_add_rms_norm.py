"""fused_add_rms_norm: the residual add and the RMS norm of a transformer block in one kernel each way.

    s = x + residual   (rounded to the input dtype, as the separate add would)
    y = s * rstd * (w + weight_offset),  rstd = 1 / sqrt(mean(s^2) + eps)   over the last dim
    returns (y, s)

Forward: one read of x and residual, one write of y and s per element. Backward: one kernel gives
dx = dresidual = dnorm(dy) + ds (s is the next residual, so its own gradient joins in the same pass),
plus dw's column sum (gems/ops/fused/norms.py). The eager composite ``x + residual`` then the RMS norm
(fused_rms_norm's reference) is the reference.
"""

from __future__ import annotations

from gems.dtypes import FLOATS
from gems.ops.fused.api import api_function
from gems.ops.fused.fused_rms_norm import scaled_rms_norm
from gems.ops.fused.norms import check_kernel_dtypes, check_residual_norm, residual_norm
from gems.spec import OpSpec, PerfSpec, lazy

NAME = "gems.fused.fused_add_rms_norm"


def reference(x, residual, weight=None, eps=1e-6, weight_offset=0.0):
    check_residual_norm(NAME, x, residual, weight)
    s = x + residual
    return scaled_rms_norm(s, weight, eps, weight_offset), s


def _fused_add_rms_norm(x, residual, weight=None, eps=1e-6, weight_offset=0.0):
    check_residual_norm(NAME, x, residual, weight)
    check_kernel_dtypes(x, residual, weight)
    return residual_norm(x, residual, weight, None, eps, rms=True, w_offset=weight_offset)


fused_add_rms_norm = api_function(
    NAME, _fused_add_rms_norm, reference, differentiable=True,
    schema="(Tensor x, Tensor residual, Tensor? weight=None, float eps=1e-06, float weight_offset=0.0) -> "
           "(Tensor, Tensor)")

SPECS = [
    OpSpec(
        name="fused_add_rms_norm", family="fused", impls={}, api={NAME: fused_add_rms_norm}, reference=reference,
        call=fused_add_rms_norm,
        samples=lazy("gems.testing.samples_fused", "residual_norm_samples", "rms"),
        dtypes=FLOATS,
        tolerance="reduction",
        perf=PerfSpec(inputs=lazy("gems.testing.samples_fused", "residual_norm_inputs", "rms"), shapes="fused_norm",
                      bytes=lazy("gems.testing.samples_norm", "io_bytes", 2)),
    ),
]
