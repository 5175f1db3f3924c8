"""logical_or (in-place, out=): x or y, each operand true where it is nonzero (NaN is true). The
operands are promoted to their common dtype first (a 0-d float32 1e-10 beside float16 is 0, false);
the result is bool, or written as 0/1 into an out= (or in-place self) of any dtype, as ATen does."""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)

from gems.codegen.pointwise import PointwiseOp, Promotion
from gems.dtypes import ALL
from gems.ops.pointwise.shared import binary_samples, inplace_of, out_of, pointwise_perf
from gems.spec import OpSpec


@triton.jit
def _logical_or(x, y):
    return (x != 0) | (y != 0)


logical_or_op = PointwiseOp("logical_or", _logical_or, operands=2, promotion=Promotion.BOOL)

SPECS = [
    OpSpec(
        name="logical_or", family="pointwise",
        impls={"logical_or": logical_or_op, "logical_or_": inplace_of(logical_or_op),
               "logical_or.out": out_of(logical_or_op)},
        call=torch.logical_or,
        samples=binary_samples(torch.logical_or, out="logical_or.out",
                               inplace=("logical_or_", lambda x, y: x.logical_or_(y)), scalar=None,
                               float_scalar=False, result="bool"),
        dtypes=ALL, tolerance="exact", perf=pointwise_perf(2),
    ),
]
