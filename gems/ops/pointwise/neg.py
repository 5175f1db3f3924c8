"""neg: -x for floats and integers; bool raises ATen's RuntimeError (not PointwiseOp's NotImplementedError)."""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS, INTS
from gems.ops.pointwise.shared import checked_overloads, combined, edge_samples, pointwise_perf, unary_samples
from gems.spec import OpSpec


@triton.jit
def _neg(x):
    if x.dtype.is_floating():
        r = x * -1.0  # Triton's -x is 0 - x, which makes -(+0.0) +0.0
    else:
        r = -x
    return r


neg_op = PointwiseOp("neg", _neg, operands=1)


def reject_bool_neg(x):
    if x.dtype is torch.bool:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
                           "to invert a mask, use the `~` or `logical_not()` operator instead.")


SPECS = [
    OpSpec(
        name="neg", family="pointwise", impls=checked_overloads(neg_op, "neg", reject_bool_neg), call=torch.neg,
        samples=combined(unary_samples(out="neg.out", inplace=("neg_", torch.neg_), grad=True, rejects=(torch.bool,)),
                         edge_samples("integer_extreme_samples", torch.neg, expects="neg")),
        dtypes=FLOATS + INTS, perf=pointwise_perf(1),
    ),
]
