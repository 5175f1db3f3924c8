"""silu_and_mul: the SwiGLU gate, ``silu(x[..., :d]) * x[..., d:]`` with d = x.shape[-1] / 2, in one
kernel (gems/ops/fused/gated.py); the eager composite ``F.silu(a) * b`` is the reference."""

from __future__ import annotations

import torch.nn.functional as F

from gems.dtypes import FLOATS
from gems.ops.fused.api import api_function
from gems.ops.fused.gated import SILU, gated
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, PerfSpec, lazy

NAME = "gems.fused.silu_and_mul"


def check_gated(x):
    if x.dim() == 0 or x.shape[-1] % 2:
        raise ValueError(f"the last dim of x must be even (the gate and the value halves), got shape {list(x.shape)}")


def reference(x):
    check_gated(x)
    a, b = x.chunk(2, dim=-1)
    return F.silu(a) * b


def _silu_and_mul(x):
    check_gated(x)
    if x.dtype not in FLOATS:
        raise Fallback(f"silu_and_mul of {x.dtype} is left to the composite")
    return gated(x, SILU)


silu_and_mul = api_function(NAME, _silu_and_mul, reference)

SPECS = [
    OpSpec(
        name="silu_and_mul", family="fused", impls={}, api={NAME: silu_and_mul}, reference=reference,
        call=silu_and_mul,
        samples=lazy("gems.testing.samples_fused", "gated_samples", {}),
        dtypes=FLOATS,
        deliberate_fallbacks={"grad": "gems.fused kernels have no backward: the eager composite runs"},
        perf=PerfSpec(inputs=lazy("gems.testing.samples_fused", "gated_inputs"), shapes="gated",
                      bytes=lazy("gems.testing.samples_norm", "io_bytes")),
    ),
]
