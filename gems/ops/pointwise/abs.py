"""abs: |x| for floats and integers (ATen refuses bool with NotImplementedError, as the op does)."""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import PointwiseOp, unary_overloads
from gems.dtypes import FLOATS, INTS
from gems.ops.pointwise.shared import combined, edge_samples, pointwise_perf, unary_samples
from gems.spec import OpSpec


@triton.jit
def _abs(x):
    return tl.abs(x)


abs_op = PointwiseOp("abs", _abs, operands=1, dtypes=FLOATS + INTS)  # bool: NotImplementedError, as ATen

SPECS = [
    OpSpec(
        name="abs", family="pointwise", impls=unary_overloads(abs_op, "abs"), call=torch.abs,
        samples=combined(unary_samples(out="abs.out", inplace=("abs_", torch.abs_), grad=True, rejects=(torch.bool,)),
                         edge_samples("integer_extreme_samples", torch.abs, expects="abs")),
        dtypes=FLOATS + INTS, perf=pointwise_perf(1),
    ),
]
