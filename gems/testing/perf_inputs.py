"""Perf input builders shared by operator declarations (shapes come from perf/shapes.yaml)."""

from __future__ import annotations

import torch

from gems.spec import PerfSpec, Sample
from gems.testing.samples import make_tensor


def tensor_bytes(*values) -> int:
    return sum(v.numel() * v.element_size() for v in values if isinstance(v, torch.Tensor))


def pointwise_perf(operands: int, shapes: str = "pointwise", domain=None, scalars=()) -> PerfSpec:
    """``operands`` same-shape tensors in, then the fixed ``scalars`` (a threshold); bytes moved = every
    input read once + the output written."""
    domain = domain or {}

    def inputs(shape, dtype, device):
        return Sample("perf", (*(make_tensor(shape, dtype, device, **domain) for _ in range(operands)), *scalars))

    def bytes_moved(sample, result):
        outputs = result if isinstance(result, tuple) else (result,)
        return tensor_bytes(*sample.args, *outputs)

    return PerfSpec(inputs=inputs, shapes=shapes, bytes=bytes_moved)
