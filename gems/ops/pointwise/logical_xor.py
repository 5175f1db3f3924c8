"""logical_xor (in-place, out=): x xor y, each operand true where it is nonzero (NaN is true). The
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
def _logical_xor(x, y):
    return (x != 0) != (y != 0)


logical_xor_op = PointwiseOp("logical_xor", _logical_xor, operands=2, promotion=Promotion.BOOL)

SPECS = [
    OpSpec(
        name="logical_xor", family="pointwise",
        impls={"logical_xor": logical_xor_op, "logical_xor_": inplace_of(logical_xor_op),
               "logical_xor.out": out_of(logical_xor_op)},
        call=torch.logical_xor,
        samples=binary_samples(torch.logical_xor, out="logical_xor.out",
                               inplace=("logical_xor_", lambda x, y: x.logical_xor_(y)), scalar=None,
                               float_scalar=False, result="bool"),
        dtypes=ALL, tolerance="exact", perf=pointwise_perf(2),
    ),
]
