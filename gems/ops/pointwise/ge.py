"""ge: x >= y (Tensor and Scalar, out=); NaN compares false.
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
def _ge(x, y):
    return x >= y


ge_op = PointwiseOp("ge", _ge, operands=2, promotion=Promotion.BOOL)

SPECS = [
    OpSpec(
        # the op itself serves every overload: (self, other, out=None)
        name="ge", family="pointwise",
        impls={"ge.Tensor": ge_op, "ge.Scalar": ge_op, "ge.Tensor_out": ge_op,
               "ge.Scalar_out": ge_op},
        call=torch.ge, samples=comparison_samples("ge", torch.ge),
        dtypes=ALL, tolerance="exact", perf=pointwise_perf(2),
    ),
]
