"""log_sigmoid_backward(grad, x, buffer): grad (max' - sign z / (1 + z)), z = exp(-|x|), max' = 1 and
sign = 1 for x < 0, 0 and -1 otherwise: ATen's CUDA formula, which ignores ``buffer`` (only ATen's CPU
kernel reads it; gems' log_sigmoid_forward returns it empty, as CUDA's does).
"""

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS
from gems.ops.pointwise.shared import backward_samples, div_rn, pointwise_perf
from gems.spec import OpSpec


@triton.jit
def _log_sigmoid_backward(grad, x):
    z = libdevice.exp(tl.abs(x) * -1.0)
    ratio = div_rn(z, 1.0 + z)
    return grad * tl.where(x < 0, 1.0 - ratio, ratio)


log_sigmoid_backward_op = PointwiseOp("log_sigmoid_backward", _log_sigmoid_backward, operands=2, dtypes=FLOATS)


def log_sigmoid_backward(grad_output, self, buffer):
    return log_sigmoid_backward_op(grad_output, self)


def log_sigmoid_backward_grad_input(grad_output, self, buffer, *, grad_input):
    return log_sigmoid_backward_op(grad_output, self, out=grad_input)


aten = torch.ops.aten


def _call(grad_output, x):
    """The backward with the buffer its device's forward gives (ATen's CPU kernel needs its own)."""
    return aten.log_sigmoid_backward.default(grad_output, x, aten.log_sigmoid_forward.default(x)[1])


def _call_grad_input(grad_output, x, *, grad_input):
    return aten.log_sigmoid_backward.grad_input(grad_output, x, aten.log_sigmoid_forward.default(x)[1],
                                                grad_input=grad_input)


SPECS = [
    OpSpec(
        name="log_sigmoid_backward", family="pointwise",
        impls={"log_sigmoid_backward": log_sigmoid_backward,
               "log_sigmoid_backward.grad_input": log_sigmoid_backward_grad_input},
        call=_call,
        samples=backward_samples(grad_input=("log_sigmoid_backward.grad_input", _call_grad_input),
                                 domain=dict(low=-30.0, high=30.0), rejects=(torch.int64,), broadcast=False),
        dtypes=FLOATS, perf=pointwise_perf(2),
    ),
]
