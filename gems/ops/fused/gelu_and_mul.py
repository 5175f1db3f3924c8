"""gelu_and_mul: the GeGLU gate in one kernel each way (gems/ops/fused/gated.py); approximate is "none"
(erf) or "tanh", as in F.gelu (Gemma's MLP uses the tanh form).

    gelu_and_mul(x)      = gelu(x[..., :d]) * x[..., d:],  d = x.shape[-1] / 2
    gelu_and_mul(x, up)  = gelu(x) * up

The eager composite ``F.gelu(a, approximate=...) * b`` is the reference.
"""

from __future__ import annotations

import torch.nn.functional as F

from gems.dtypes import FLOATS
from gems.ops.fused.api import api_function
from gems.ops.fused.gated import GELU, GELU_TANH, gated
from gems.ops.fused.silu_and_mul import check_kernel_dtypes, operands
from gems.spec import OpSpec, PerfSpec, lazy

NAME = "gems.fused.gelu_and_mul"
_APPROXIMATIONS = {"none": GELU, "tanh": GELU_TANH}


def _check(x, up, approximate):
    if approximate not in _APPROXIMATIONS:
        raise ValueError(f"approximate must be 'none' or 'tanh', got {approximate!r}")
    return operands(x, up)


def reference(x, up=None, approximate="none"):
    a, b = _check(x, up, approximate)
    return F.gelu(a, approximate=approximate) * b


def _gelu_and_mul(x, up=None, approximate="none"):
    _check(x, up, approximate)
    check_kernel_dtypes(x, up)
    return gated(x, up, _APPROXIMATIONS[approximate])


gelu_and_mul = api_function(NAME, _gelu_and_mul, reference, differentiable=True,
                            schema="(Tensor x, Tensor? up=None, str approximate=\"none\") -> Tensor")

SPECS = [
    OpSpec(
        name="gelu_and_mul", family="fused", impls={}, api={NAME: gelu_and_mul}, reference=reference,
        call=gelu_and_mul,
        samples=lazy("gems.testing.samples_fused", "gated_samples", {"tanh": {"approximate": "tanh"}}),
        dtypes=FLOATS,
        perf=PerfSpec(inputs=lazy("gems.testing.samples_fused", "gated_inputs"), shapes="gated",
                      bytes=lazy("gems.testing.samples_norm", "io_bytes", 2)),
    ),
]
