"""silu_and_mul: the SwiGLU gate in one kernel each way (gems/ops/fused/gated.py).

    silu_and_mul(x)      = silu(x[..., :d]) * x[..., d:],  d = x.shape[-1] / 2
    silu_and_mul(x, up)  = silu(x) * up                     (Llama's MLP: act_fn(gate_proj(h)) * up_proj(h))

Hugging Face's MLP runs it as two ATen kernels forward and saves three tensors (gate, silu(gate), up);
here one kernel reads the gate and up and writes y, the backward one kernel reads dy, gate and up and
writes both gradients. The eager composite ``F.silu(a) * b`` is the reference.
"""

from __future__ import annotations

import torch.nn.functional as F

from gems.dtypes import FLOATS
from gems.ops.fused.api import api_function
from gems.ops.fused.gated import SILU, gated
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, PerfSpec, lazy

NAME = "gems.fused.silu_and_mul"


def operands(x, up):
    """(gate, value) after the checks both forms share (ValueError otherwise)."""
    if up is None:
        if x.dim() == 0 or x.shape[-1] % 2:
            raise ValueError(f"the last dim of x must be even (the gate and the value halves), got shape "
                             f"{list(x.shape)}")
        return x.chunk(2, dim=-1)
    if up.shape != x.shape:
        raise ValueError(f"up of shape {list(up.shape)} does not match the gate's {list(x.shape)}")
    if x.dim() == 0:
        raise ValueError("the gate and up must have at least one dimension, got 0-d tensors")
    return x, up


def check_kernel_dtypes(x, up):
    if x.dtype not in FLOATS or (up is not None and up.dtype != x.dtype):
        raise Fallback(f"gated activations of {x.dtype}{'' if up is None else f' and {up.dtype}'} are left to the "
                       "composite")


def reference(x, up=None):
    a, b = operands(x, up)
    return F.silu(a) * b


def _silu_and_mul(x, up=None):
    operands(x, up)
    check_kernel_dtypes(x, up)
    return gated(x, up, SILU)


silu_and_mul = api_function(NAME, _silu_and_mul, reference, differentiable=True,
                            schema="(Tensor x, Tensor? up=None) -> Tensor")

SPECS = [
    OpSpec(
        name="silu_and_mul", family="fused", impls={}, api={NAME: silu_and_mul}, reference=reference,
        call=silu_and_mul,
        samples=lazy("gems.testing.samples_fused", "gated_samples", {}),
        dtypes=FLOATS,
        perf=PerfSpec(inputs=lazy("gems.testing.samples_fused", "gated_inputs"), shapes="gated",
                      bytes=lazy("gems.testing.samples_norm", "io_bytes", 2)),
    ),
]
