"""sigmoid_backward: grad * (1 - y) * y, y being sigmoid's output (ATen's formula)."""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS
from gems.ops.pointwise.shared import backward_overloads, backward_samples, pointwise_perf
from gems.spec import OpSpec


@triton.jit
def _sigmoid_backward(grad, y):
    return grad * (1.0 - y) * y


sigmoid_backward_op = PointwiseOp("sigmoid_backward", _sigmoid_backward, operands=2, dtypes=FLOATS)
aten = torch.ops.aten

SPECS = [
    OpSpec(
        name="sigmoid_backward", family="pointwise",
        impls=backward_overloads(sigmoid_backward_op, "sigmoid_backward"), call=aten.sigmoid_backward.default,
        samples=backward_samples(grad_input=("sigmoid_backward.grad_input", aten.sigmoid_backward.grad_input),
                                 domain={'low': 0.0, 'high': 1.0},
                                 rejects=(torch.int64, torch.bool)),
        dtypes=FLOATS, perf=pointwise_perf(2),
    ),
]
