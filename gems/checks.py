"""ATen's argument checks that several operators share (one place, not one copy per operator file).

Each raises the exception type and message ATen raises for the same input, so that conformance finds
gems and ATen refusing alike.
"""

from __future__ import annotations

import math

import torch

from gems.codegen.pointwise import SUPPORTED_DTYPES
from gems.dtypes import name
from gems.runtime.registration import Fallback

_INT_RANGE = {torch.int8: (-(2**7), 2**7 - 1), torch.int16: (-(2**15), 2**15 - 1),
              torch.int32: (-(2**31), 2**31 - 1), torch.int64: (-(2**63), 2**63 - 1), torch.uint8: (0, 255)}
_FLOAT_MAX = {torch.float16: torch.finfo(torch.float16).max, torch.bfloat16: torch.finfo(torch.bfloat16).max,
              torch.float32: torch.finfo(torch.float32).max}
# The C++ type names in ATen's overflow message.
_C_NAMES = {torch.int8: "int8_t", torch.int16: "int16_t", torch.int32: "int", torch.int64: "int64_t",
            torch.uint8: "uint8_t", torch.float16: "c10::Half", torch.bfloat16: "c10::BFloat16",
            torch.float32: "float", torch.float64: "double"}


def checked_scalar(value, dtype: torch.dtype):
    """``value`` converted to a Python number of ``dtype``'s kind, refusing what ATen's
    ``Scalar::to<T>()`` refuses (RuntimeError "value cannot be converted to type T without overflow")."""
    if dtype is torch.bool:
        return bool(value)
    if dtype not in SUPPORTED_DTYPES:
        raise Fallback(f"dtype {dtype} not handled by gems kernels")
    if isinstance(value, complex):
        if value.imag != 0:
            raise RuntimeError(f"value cannot be converted to type {_C_NAMES.get(dtype, dtype)} without overflow")
        value = value.real
    if dtype.is_floating_point:
        v = float(value)
        limit = _FLOAT_MAX.get(dtype)
        if limit is not None and math.isfinite(v) and abs(v) > limit:
            raise RuntimeError(f"value cannot be converted to type {_C_NAMES[dtype]} without overflow")
        return v
    lo, hi = _INT_RANGE[dtype]
    if isinstance(value, float):
        if not math.isfinite(value) or value < lo or value > hi:
            raise RuntimeError(f"value cannot be converted to type {_C_NAMES[dtype]} without overflow")
        return int(value)  # truncation towards zero, as a C++ cast
    v = int(value)
    if dtype is torch.uint8:
        # An unsigned target accepts negative values down to -max, which wrap (c10::overflows).
        bad = v > hi or (v < 0 and -v > hi)
    else:
        bad = v < lo or v > hi
    if bad:
        raise RuntimeError(f"value cannot be converted to type {_C_NAMES[dtype]} without overflow")
    return v


def check_exact_out(out, op, operands, message):
    """ATen's unary structured kernels (clamp, clamp_min, floor_divide.Scalar_out) want out= of exactly
    the result dtype; ``message`` is ATen's, with ``{want}`` and ``{got}``."""
    want = op.result_dtypes(list(operands))[1][0]
    if out.dtype != want:
        raise RuntimeError(message.format(want=name(want), got=name(out.dtype)))


def check_out(out: torch.Tensor, like: torch.Tensor, dtype: torch.dtype | None = None) -> None:
    """ATen's checks of an ``out=`` tensor for a result computed from ``like``: the same device (never a
    launch on another device's pointer) and exactly ``dtype`` (default: like's)."""
    if out.device != like.device:
        raise RuntimeError(f"Expected out tensor to have device {like.device}, but got {out.device} instead")
    dtype = like.dtype if dtype is None else dtype
    if out.dtype != dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {dtype}, but got {out.dtype} instead")
