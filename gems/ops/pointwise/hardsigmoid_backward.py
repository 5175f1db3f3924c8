"""hardsigmoid_backward(grad, x): grad / 6 where -3 < x < 3, else 0 (NaN x gives 0); a correctly rounded
division, where ATen's CUDA kernel multiplies by 1.0f / 6.0f (see hardsigmoid.py)."""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS
from gems.ops.pointwise.shared import backward_overloads, backward_samples, fdiv, pointwise_perf
from gems.spec import OpSpec


@triton.jit
def _hardsigmoid_backward(grad, x):
    return tl.where((x > -3.0) & (x < 3.0), fdiv(grad, 6.0), 0.0)


hardsigmoid_backward_op = PointwiseOp("hardsigmoid_backward", _hardsigmoid_backward, operands=2, dtypes=FLOATS)
aten = torch.ops.aten

SPECS = [
    OpSpec(
        name="hardsigmoid_backward", family="pointwise",
        impls=backward_overloads(hardsigmoid_backward_op, "hardsigmoid_backward"),
        call=aten.hardsigmoid_backward.default,
        samples=backward_samples(grad_input=("hardsigmoid_backward.grad_input", aten.hardsigmoid_backward.grad_input),
                                 domain=dict(low=-5.0, high=5.0), rejects=(torch.int64,)),
        dtypes=FLOATS, perf=pointwise_perf(2),
    ),
]
