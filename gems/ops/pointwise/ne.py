"""ne: x != y (Tensor and Scalar, out=); NaN is unequal to everything, itself included.
The operands are promoted to their common dtype (a scalar is rounded to it first, so an int8 tensor
compared with 1000 compares with 1000 wrapped to int8, as ATen does); the result is bool."""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)

from gems.codegen.pointwise import PointwiseOp, Promotion
from gems.dtypes import ALL
from gems.ops.pointwise.shared import comparison_samples, pointwise_perf
from gems.spec import OpSpec


@triton.jit
def _ne(x, y):
    return x != y


ne_op = PointwiseOp("ne", _ne, operands=2, promotion=Promotion.BOOL)

SPECS = [
    OpSpec(
        # the op itself serves every overload: (self, other, out=None)
        name="ne", family="pointwise",
        impls={"ne.Tensor": ne_op, "ne.Scalar": ne_op, "ne.Tensor_out": ne_op,
               "ne.Scalar_out": ne_op},
        call=torch.ne, samples=comparison_samples("ne", torch.ne),
        dtypes=ALL, tolerance="exact", perf=pointwise_perf(2),
    ),
]
