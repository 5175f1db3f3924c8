"""gelu_and_mul: the GeGLU gate, ``gelu(x[..., :d], approximate) * x[..., d:]`` with d = x.shape[-1] / 2,
in one kernel (gems/ops/fused/gated.py); approximate is "none" (erf) or "tanh", as in F.gelu. The eager
composite ``F.gelu(a, approximate=...) * b`` is the reference."""

from __future__ import annotations

import torch.nn.functional as F

from gems.dtypes import FLOATS
from gems.ops.fused.api import api_function
from gems.ops.fused.gated import GELU, GELU_TANH, gated
from gems.ops.fused.silu_and_mul import check_gated
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, PerfSpec, lazy

NAME = "gems.fused.gelu_and_mul"
_APPROXIMATIONS = {"none": GELU, "tanh": GELU_TANH}


def _check(x, approximate):
    check_gated(x)
    if approximate not in _APPROXIMATIONS:
        raise ValueError(f"approximate must be 'none' or 'tanh', got {approximate!r}")


def reference(x, approximate="none"):
    _check(x, approximate)
    a, b = x.chunk(2, dim=-1)
    return F.gelu(a, approximate=approximate) * b


def _gelu_and_mul(x, approximate="none"):
    _check(x, approximate)
    if x.dtype not in FLOATS:
        raise Fallback(f"gelu_and_mul of {x.dtype} is left to the composite")
    return gated(x, _APPROXIMATIONS[approximate])


gelu_and_mul = api_function(NAME, _gelu_and_mul, reference)

SPECS = [
    OpSpec(
        name="gelu_and_mul", family="fused", impls={}, api={NAME: gelu_and_mul}, reference=reference,
        call=gelu_and_mul,
        samples=lazy("gems.testing.samples_fused", "gated_samples", {"tanh": {"approximate": "tanh"}}),
        dtypes=FLOATS,
        deliberate_fallbacks={"grad": "gems.fused kernels have no backward: the eager composite runs"},
        perf=PerfSpec(inputs=lazy("gems.testing.samples_fused", "gated_inputs"), shapes="gated",
                      bytes=lazy("gems.testing.samples_norm", "io_bytes")),
    ),
]
