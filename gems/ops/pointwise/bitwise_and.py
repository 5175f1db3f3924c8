"""bitwise_and (Tensor, Scalar, Scalar_Tensor, in-place, out=); bool: logical and. Overloads and
samples shared with bitwise_or are in bitwise_shared.py."""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import INTS_AND_BOOL
from gems.ops.pointwise.bitwise_shared import binary_impls, binary_samples
from gems.ops.pointwise.shared import pointwise_perf
from gems.spec import OpSpec


@triton.jit
def _and(x, y):
    return x & y


and_op = PointwiseOp("bitwise_and", _and, operands=2, dtypes=INTS_AND_BOOL)

SPECS = [
    OpSpec(
        name="bitwise_and", family="pointwise", impls=binary_impls("bitwise_and", and_op), call=torch.bitwise_and,
        samples=binary_samples("bitwise_and", torch.bitwise_and, lambda x, y: x.bitwise_and_(y)),
        dtypes=INTS_AND_BOOL, tolerance="exact", perf=pointwise_perf(2),
    ),
]
