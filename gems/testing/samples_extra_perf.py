"""Perf inputs of where and masked_fill (a random mask) and of operators with fixed scalar arguments
(clamp's bounds)."""

from __future__ import annotations

import torch

from gems.spec import PerfSpec, Sample
from gems.testing.perf_inputs import tensor_bytes
from gems.testing.samples import make_tensor

# --------------------------------------------------------------------------- perf inputs


def masked_perf(value=None, shapes="pointwise"):
    """Perf inputs ``(x, mask[, y])`` for where / masked_fill: a random bool mask of the same shape."""

    def inputs(shape, dtype, device):
        x = make_tensor(shape, dtype, device)
        mask = make_tensor(shape, torch.bool, device)
        if value is None:
            return Sample("perf", (mask, x, make_tensor(shape, dtype, device)))
        return Sample("perf", (x, mask, value))

    def bytes_moved(sample, result):
        return tensor_bytes(*sample.args, result)

    return PerfSpec(inputs=inputs, shapes=shapes, bytes=bytes_moved)


def scalars_perf(*scalars, shapes="pointwise"):
    """Perf inputs ``(x, *scalars)``: one tensor and fixed scalar arguments (clamp's bounds)."""

    def inputs(shape, dtype, device):
        return Sample("perf", (make_tensor(shape, dtype, device), *scalars))

    def bytes_moved(sample, result):
        return tensor_bytes(sample.args[0], result)

    return PerfSpec(inputs=inputs, shapes=shapes, bytes=bytes_moved)
