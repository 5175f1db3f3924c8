"""skip_layer_norm: the skip-connection add and the layer norm in one kernel each way (BERT's and ViT's
``LayerNorm(x + residual)``).

    s = x + skip   (rounded to the input dtype, as the separate add would)
    y = (s - mean) * rstd * w + b,  rstd = 1 / sqrt(var(s) + eps)   over the last dim
    returns (y, s)

Forward: one read of x and skip, one write of y and s per element. Backward: one kernel gives
dx = dskip = dnorm(dy) + ds, plus the column sums of dw and db (gems/ops/fused/norms.py). The eager
composite ``x + skip`` then ``F.layer_norm`` is the reference.
"""

from __future__ import annotations

import torch.nn.functional as F

from gems.dtypes import FLOATS
from gems.ops.fused.api import api_function
from gems.ops.fused.norms import check_kernel_dtypes, check_residual_norm, residual_norm
from gems.spec import OpSpec, PerfSpec, lazy

NAME = "gems.fused.skip_layer_norm"


def reference(x, skip, weight=None, bias=None, eps=1e-5):
    check_residual_norm(NAME, x, skip, weight, bias)
    s = x + skip
    return F.layer_norm(s, (s.shape[-1],), weight, bias, eps), s


def _skip_layer_norm(x, skip, weight=None, bias=None, eps=1e-5):
    check_residual_norm(NAME, x, skip, weight, bias)
    check_kernel_dtypes(x, skip, weight, bias)
    return residual_norm(x, skip, weight, bias, eps, rms=False)


skip_layer_norm = api_function(
    NAME, _skip_layer_norm, reference, differentiable=True,
    schema="(Tensor x, Tensor skip, Tensor? weight=None, Tensor? bias=None, float eps=1e-05) -> (Tensor, Tensor)")

SPECS = [
    OpSpec(
        name="skip_layer_norm", family="fused", impls={}, api={NAME: skip_layer_norm}, reference=reference,
        call=skip_layer_norm,
        samples=lazy("gems.testing.samples_fused", "residual_norm_samples", "layer"),
        dtypes=FLOATS,
        tolerance="reduction",
        perf=PerfSpec(inputs=lazy("gems.testing.samples_fused", "residual_norm_inputs", "layer"), shapes="fused_norm",
                      bytes=lazy("gems.testing.samples_norm", "io_bytes", 2)),
    ),
]
