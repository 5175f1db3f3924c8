"""signbit: whether the sign bit is set (bool): true for -0.0 and for NaNs with the bit set, as ATen's
``signbit``; ``x < 0`` for signed integers, false for unsigned integers and bool. The float test reads the
bits, so fp16/bf16 (widened to fp32, sign kept) and NaN need no special case.
"""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import PointwiseOp, Promotion
from gems.ops.pointwise.unary_shared import bool_out_overload, unary_spec, value_samples


@triton.jit
def _signbit(x):
    if x.dtype == tl.float64:
        r = x.to(tl.int64, bitcast=True) < 0
    elif x.dtype.is_floating():
        r = x.to(tl.int32, bitcast=True) < 0
    elif x.dtype.is_int_signed():
        r = x < 0
    else:
        r = x != x  # unsigned and bool: never negative
    return r


signbit_op = PointwiseOp("signbit", _signbit, operands=1, promotion=Promotion.BOOL)

SPECS = [
    unary_spec(signbit_op, torch.signbit, inplace=False, grad=False,
               impls=bool_out_overload(signbit_op),
               more=(value_samples([-0.0, 0.0, float("nan"), -float("nan"), -float("inf"), ("ulp-below", 0.0)]),)),
]
