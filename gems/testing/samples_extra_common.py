"""Shared pieces of the pointwise and creation sample generators (gems/testing/samples_extra_*.py, and
samples_pwbinary.py): the widest out= and in-place dtypes of each kind, an out= dtype ATen refuses, a
strided empty out= tensor, another device for device-mismatch variants."""

from __future__ import annotations

import torch

# The widest dtype of each kind: an out= tensor of it accepts any result of that kind.
WIDER = {torch.float16: torch.float32, torch.bfloat16: torch.float32, torch.float32: torch.float64,
         torch.int8: torch.int16, torch.int16: torch.int32, torch.int32: torch.int64, torch.uint8: torch.int16,
         torch.bool: torch.float32}
# A dtype that self can hold the result of an in-place operation with a wider other in.
INPLACE_WIDER = {torch.float16: torch.float32, torch.bfloat16: torch.float32, torch.float32: torch.float64,
                 torch.int8: torch.int32, torch.int16: torch.int32, torch.int32: torch.int64, torch.uint8: torch.int32}


def other_device(device) -> str:
    """A device that is not ``device``, for out= device-mismatch variants (meta beside the CPU)."""
    return "meta" if str(device) in ("cpu", "meta") else "cpu"


def strided_empty(shape, dtype, device):
    rows, cols = shape
    return torch.empty((rows, cols * 2), dtype=dtype, device=device)[:, ::2]


def refused_out_dtype(dtype):
    """An out= dtype that ATen refuses for a result of ``dtype`` (None when every dtype is accepted)."""
    if dtype.is_floating_point:
        return torch.int64
    if dtype != torch.bool:
        return torch.bool
    return None
