"""logical_not (in-place, out=): true where x is zero (NaN is nonzero: false). The result is bool, or
written as 0/1 into an out= (or in-place self) of any dtype, as ATen does."""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)

from gems.codegen.pointwise import PointwiseOp, Promotion, unary_overloads
from gems.dtypes import ALL
from gems.ops.pointwise.shared import pointwise_perf
from gems.spec import OpSpec, lazy


@triton.jit
def _logical_not(x):
    return x == 0


logical_not_op = PointwiseOp("logical_not", _logical_not, operands=1, promotion=Promotion.BOOL)

SPECS = [
    OpSpec(
        name="logical_not", family="pointwise", impls=unary_overloads(logical_not_op, "logical_not"),
        call=torch.logical_not,
        samples=lazy("gems.testing.samples_extra", "unary_op_samples", torch.logical_not, out="logical_not.out",
                     inplace=("logical_not_", torch.Tensor.logical_not_)),
        dtypes=ALL, tolerance="exact", perf=pointwise_perf(1),
    ),
]
