"""silu_backward: grad * s * (1 + x (1 - s)), s = sigmoid(x) (ATen's formula)."""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS
from gems.ops.pointwise.shared import backward_overloads, backward_samples, div_rn, pointwise_perf
from gems.spec import OpSpec


@triton.jit
def _silu_backward(grad, x):
    sigmoid = div_rn(1.0, 1.0 + libdevice.exp(-x))
    return grad * sigmoid * (1.0 + x * (1.0 - sigmoid))


silu_backward_op = PointwiseOp("silu_backward", _silu_backward, operands=2, dtypes=FLOATS)
aten = torch.ops.aten

SPECS = [
    OpSpec(
        name="silu_backward", family="pointwise",
        impls=backward_overloads(silu_backward_op, "silu_backward"), call=aten.silu_backward.default,
        samples=backward_samples(grad_input=("silu_backward.grad_input", aten.silu_backward.grad_input),
                                 rejects=(torch.int64, torch.bool)),
        dtypes=FLOATS, perf=pointwise_perf(2),
    ),
]
