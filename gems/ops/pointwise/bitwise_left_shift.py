"""bitwise_left_shift (Tensor, Tensor_Scalar, Scalar_Tensor, in-place, out=) and ``__lshift__`` /
``__ilshift__`` (``<<``, ``<<=``; real kernels in ATen, not aliases): x << y for integers, computed on
the bits of the common dtype (a negative x shifts its two's complement bits). A negative amount, or one
of the bit width or more, gives 0, as ATen's kernels do (C leaves them undefined). Overloads and samples
are shared with bitwise_right_shift in bitwise_shared.py."""

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
def _shift_left(x, y):
    bits = x.dtype.primitive_bitwidth
    if x.dtype.is_int_signed():
        past = (y < 0) | (y >= bits)
    else:
        past = y >= bits
    return tl.where(past, 0, x << tl.where(past, 0, y))  # the amount kept in range: LLVM's shl is poison past it


shift_left_op = PointwiseOp("bitwise_left_shift", _shift_left, operands=2, dtypes=INTS)

SPECS = [
    OpSpec(
        name="bitwise_left_shift", family="pointwise", impls=shift_impls("bitwise_left_shift", "lshift", shift_left_op),
        call=torch.bitwise_left_shift, samples=shift_samples("bitwise_left_shift", "lshift", operator.lshift),
        dtypes=INTS, tolerance="exact", perf=pointwise_perf(2, domain={"int_low": 0, "int_high": 7}),
    ),
]
