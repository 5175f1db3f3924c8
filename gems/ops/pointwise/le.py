"""le: x <= y (Tensor and Scalar, out=); NaN compares false.
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
def _le(x, y):
    return x <= y


le_op = PointwiseOp("le", _le, operands=2, promotion=Promotion.BOOL)

SPECS = [
    OpSpec(
        # the op itself serves every overload: (self, other, out=None)
        name="le", family="pointwise",
        impls={"le.Tensor": le_op, "le.Scalar": le_op, "le.Tensor_out": le_op,
               "le.Scalar_out": le_op},
        call=torch.le, samples=comparison_samples("le", torch.le),
        dtypes=ALL, tolerance="exact", perf=pointwise_perf(2),
    ),
]
