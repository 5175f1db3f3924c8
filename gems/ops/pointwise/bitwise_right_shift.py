"""bitwise_right_shift (Tensor, Tensor_Scalar, Scalar_Tensor, in-place, out=) and ``__rshift__`` /
``__irshift__`` (``>>``, ``>>=``; real kernels in ATen, not aliases): x >> y for integers, arithmetic
(sign-filling) for signed dtypes. A negative amount, or one past the last bit (width - 1 for signed dtypes,
width for uint8), shifts by that last bit, as ATen's kernels do: the sign for signed dtypes, 0 for uint8.
Overloads and samples are shared with bitwise_left_shift in bitwise_shared.py."""

import operator

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import INTS
from gems.ops.pointwise.bitwise_shared import shift_impls, shift_samples
from gems.ops.pointwise.shared import pointwise_perf
from gems.spec import OpSpec


@triton.jit
def _shift_right(x, y):
    if x.dtype.is_int_signed():
        last = x.dtype.primitive_bitwidth - 1
        r = x >> tl.where((y < 0) | (y > last), last, y)
    else:
        past = y >= x.dtype.primitive_bitwidth
        r = tl.where(past, 0, x >> tl.where(past, 0, y))  # the amount kept in range: LLVM's lshr is poison past it
    return r


shift_right_op = PointwiseOp("bitwise_right_shift", _shift_right, operands=2, dtypes=INTS)

SPECS = [
    OpSpec(
        name="bitwise_right_shift", family="pointwise",
        impls=shift_impls("bitwise_right_shift", "rshift", shift_right_op),
        call=torch.bitwise_right_shift, samples=shift_samples("bitwise_right_shift", "rshift", operator.rshift),
        dtypes=INTS, tolerance="exact", perf=pointwise_perf(2, domain={"int_low": 0, "int_high": 7}),
    ),
]
