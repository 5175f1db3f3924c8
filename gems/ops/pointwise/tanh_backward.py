"""tanh_backward: grad * (1 - y^2), y being tanh's output (ATen's formula)."""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS
from gems.ops.pointwise.shared import backward_overloads, backward_samples, pointwise_perf
from gems.spec import OpSpec


@triton.jit
def _tanh_backward(grad, y):
    return grad * (1.0 - y * y)


tanh_backward_op = PointwiseOp("tanh_backward", _tanh_backward, operands=2, dtypes=FLOATS)
aten = torch.ops.aten

SPECS = [
    OpSpec(
        name="tanh_backward", family="pointwise",
        impls=backward_overloads(tanh_backward_op, "tanh_backward"), call=aten.tanh_backward.default,
        samples=backward_samples(grad_input=("tanh_backward.grad_input", aten.tanh_backward.grad_input),
                                 domain={'low': -1.0, 'high': 1.0},
                                 rejects=(torch.int64, torch.bool)),
        dtypes=FLOATS, perf=pointwise_perf(2),
    ),
]
