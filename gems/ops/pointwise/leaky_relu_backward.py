"""leaky_relu_backward(grad, x, negative_slope, self_is_result): grad where x > 0, else grad *
negative_slope; a saved result with a negative slope cannot be inverted (ATen's RuntimeError)."""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS
from gems.ops.pointwise.shared import backward_samples, combined, pointwise_perf
from gems.ops.pointwise.unary_shared import error_calls
from gems.spec import OpSpec


@triton.jit
def _leaky_relu_backward(grad, x, negative_slope):
    return tl.where(x > 0, grad, grad * negative_slope)


leaky_relu_backward_op = PointwiseOp("leaky_relu_backward", _leaky_relu_backward, operands=2,
                                     scalars=("negative_slope",), dtypes=FLOATS)


def _slope(negative_slope, self_is_result):
    if self_is_result and negative_slope < 0:
        raise RuntimeError(
            "In-place leakyReLu backward calculation is triggered with a negative slope which is not supported. "
            "This is caused by calling in-place forward function with a negative slope, please call out-of-place "
            "version instead. File an issue at https://github.com/pytorch/pytorch if you do require supporting "
            "in-place leakRelu backward calculation with negative slope")
    return float(negative_slope)


def leaky_relu_backward(grad_output, self, negative_slope, self_is_result):
    return leaky_relu_backward_op(grad_output, self, _slope(negative_slope, self_is_result))


def leaky_relu_backward_grad_input(grad_output, self, negative_slope, self_is_result, *, grad_input):
    return leaky_relu_backward_op(grad_output, self, _slope(negative_slope, self_is_result), out=grad_input)


aten = torch.ops.aten

SPECS = [
    OpSpec(
        name="leaky_relu_backward", family="pointwise",
        impls={"leaky_relu_backward": leaky_relu_backward,
               "leaky_relu_backward.grad_input": leaky_relu_backward_grad_input},
        call=aten.leaky_relu_backward.default,
        samples=combined(
            backward_samples(grad_input=("leaky_relu_backward.grad_input", aten.leaky_relu_backward.grad_input),
                             scalars=(0.01, False), rejects=(torch.int64,)),
            ("result", backward_samples(scalars=(0.2, True), broadcast=False)),
            error_calls(("error-negative-slope-result", lambda g, x: aten.leaky_relu_backward(g, x, -0.5, True)),
                        operands=2),
        ),
        dtypes=FLOATS, perf=pointwise_perf(2, scalars=(0.01, False)),
    ),
]
