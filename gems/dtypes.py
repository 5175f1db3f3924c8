"""Dtype groups that operator declarations and checks share (one place, not one copy per module)."""

import torch

FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
LOW_PRECISION_FLOATS = (torch.float16, torch.bfloat16)
SIGNED_INTS = (torch.int8, torch.int16, torch.int32, torch.int64)
INTS = (*SIGNED_INTS, torch.uint8)
INTS_AND_BOOL = INTS + (torch.bool,)  # bitwise operators
NUMERIC = FLOATS + INTS
ALL = NUMERIC + (torch.bool,)  # every dtype gems kernels handle

# ATen's names in its messages ("result type Float can't be cast to ...").
ATEN_NAMES = {torch.float16: "Half", torch.bfloat16: "BFloat16", torch.float32: "Float", torch.float64: "Double",
              torch.int8: "Char", torch.int16: "Short", torch.int32: "Int", torch.int64: "Long", torch.uint8: "Byte",
              torch.bool: "Bool"}


def name(dtype: torch.dtype) -> str:
    """``float16`` for torch.float16: the name reports and options use."""
    return str(dtype).replace("torch.", "")
