"""logical_and (in-place, out=): x and y, each operand true where it is nonzero (NaN is true). The
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
def _logical_and(x, y):
    return (x != 0) & (y != 0)


logical_and_op = PointwiseOp("logical_and", _logical_and, operands=2, promotion=Promotion.BOOL)

SPECS = [
    OpSpec(
        name="logical_and", family="pointwise",
        impls={"logical_and": logical_and_op, "logical_and_": inplace_of(logical_and_op),
               "logical_and.out": out_of(logical_and_op)},
        call=torch.logical_and,
        samples=binary_samples(torch.logical_and, out="logical_and.out",
                               inplace=("logical_and_", lambda x, y: x.logical_and_(y)), scalar=None,
                               float_scalar=False, result="bool"),
        dtypes=ALL, tolerance="exact", perf=pointwise_perf(2),
    ),
]
