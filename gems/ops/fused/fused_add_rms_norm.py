"""fused_add_rms_norm: the residual add and the RMS norm of a transformer block in one kernel.

    s = x + residual   (rounded to the input dtype, as the separate add would)
    y = s * rstd * w,  rstd = 1 / sqrt(mean(s^2) + eps)   over the last dim
    returns (y, s)

One read of x and residual, one write of y and s per element (the row kernel of
gems/ops/normalization/rows.py with a residual). The eager composite ``x + residual`` then
``F.rms_norm`` is the reference.
"""

from __future__ import annotations

import torch.nn.functional as F

from gems.dtypes import FLOATS
from gems.ops.fused.api import api_function
from gems.ops.normalization.rows import as_rows, row_forward
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, PerfSpec, lazy

NAME = "gems.fused.fused_add_rms_norm"


def check_residual_norm(x, residual, weight, bias=None):
    """The shapes both the kernel and the composite accept (ValueError otherwise)."""
    if x.dim() == 0:
        raise ValueError(f"{NAME.rpartition('.')[2]}: x must have at least one dimension")
    if residual.shape != x.shape:
        raise ValueError(f"residual of shape {list(residual.shape)} does not match x of shape {list(x.shape)}")
    for label, p in (("weight", weight), ("bias", bias)):
        if p is not None and list(p.shape) != [x.shape[-1]]:
            raise ValueError(f"{label} of shape {list(p.shape)} does not match the last dim of x ({x.shape[-1]})")


def check_kernel_dtypes(x, *others):
    if x.dtype not in FLOATS or any(t is not None and t.dtype != x.dtype for t in others):
        raise Fallback("the kernel takes tensors of one floating dtype")
    if x.shape[-1] == 0:
        raise Fallback("rows of zero length")


def reference(x, residual, weight, eps=1e-6):
    check_residual_norm(x, residual, weight)
    s = x + residual
    return F.rms_norm(s, (s.shape[-1],), weight, eps), s


def _fused_add_rms_norm(x, residual, weight, eps=1e-6):
    check_residual_norm(x, residual, weight)
    check_kernel_dtypes(x, residual, weight)
    n = x.shape[-1]
    y, s, _, _ = row_forward(as_rows(x, n), eps, rms=True, weight=weight, residual=as_rows(residual, n))
    return y.view(x.shape), s.view(x.shape)


fused_add_rms_norm = api_function(NAME, _fused_add_rms_norm, reference)

SPECS = [
    OpSpec(
        name="fused_add_rms_norm", family="fused", impls={}, api={NAME: fused_add_rms_norm}, reference=reference,
        call=fused_add_rms_norm,
        samples=lazy("gems.testing.samples_fused", "residual_norm_samples", "rms"),
        dtypes=FLOATS,
        tolerance="reduction",
        deliberate_fallbacks={"grad": "gems.fused kernels have no backward: the eager composite runs"},
        perf=PerfSpec(inputs=lazy("gems.testing.samples_fused", "residual_norm_inputs", "rms"), shapes="fused_norm",
                      bytes=lazy("gems.testing.samples_norm", "io_bytes", 2)),
    ),
]
