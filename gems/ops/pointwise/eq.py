"""eq: x == y (Tensor and Scalar, out=); NaN equals nothing.
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
def _eq(x, y):
    return x == y


eq_op = PointwiseOp("eq", _eq, operands=2, promotion=Promotion.BOOL)

SPECS = [
    OpSpec(
        # the op itself serves every overload: (self, other, out=None)
        name="eq", family="pointwise",
        impls={"eq.Tensor": eq_op, "eq.Scalar": eq_op, "eq.Tensor_out": eq_op,
               "eq.Scalar_out": eq_op},
        call=torch.eq, samples=comparison_samples("eq", torch.eq),
        dtypes=ALL, tolerance="exact", perf=pointwise_perf(2),
    ),
]
