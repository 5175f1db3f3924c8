"""elu_backward(grad, alpha, scale, input_scale, is_result, self_or_result), ATen's CUDA formula: for
x <= 0, ``grad * input_scale * (x + alpha * scale)`` when x is elu's result (the in-place forward saved
it), ``grad * input_scale * alpha * scale * exp(x * input_scale)`` when it is elu's input; ``grad * scale``
above 0. A result with a negative alpha cannot be inverted: ATen's RuntimeError.

NaN x is left out of the special-value samples: ATen's CPU kernel answers NaN (fp64) there in its vectorized
loop and grad * scale in its scalar tail; gems gives grad * scale, as ATen's CUDA formula.
"""

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS
from gems.ops.pointwise.shared import backward_samples, combined, pointwise_perf
from gems.ops.pointwise.unary_shared import error_calls, without_values
from gems.spec import OpSpec


@triton.jit
def _elu_backward(grad, x, alpha, scale, input_scale, is_result):
    negative_coefficient = alpha * scale
    from_result = grad * input_scale * (x + negative_coefficient)
    from_input = grad * input_scale * negative_coefficient * libdevice.exp(x * input_scale)
    return tl.where(x <= 0, tl.where(is_result != 0, from_result, from_input), grad * scale)


elu_backward_op = PointwiseOp("elu_backward", _elu_backward, operands=2,
                              scalars=("alpha", "scale", "input_scale", "is_result"), dtypes=FLOATS)


def _scalars(alpha, scale, input_scale, is_result):
    if is_result and alpha < 0:
        raise RuntimeError("In-place elu backward calculation is triggered with a negative slope which is not "
                           "supported. This is caused by calling in-place forward function with a negative slope, "
                           "please call out-of-place version instead.")
    return float(alpha), float(scale), float(input_scale), int(is_result)


def elu_backward(grad_output, alpha, scale, input_scale, is_result, self_or_result):
    return elu_backward_op(grad_output, self_or_result, *_scalars(alpha, scale, input_scale, is_result))


def elu_backward_grad_input(grad_output, alpha, scale, input_scale, is_result, self_or_result, *, grad_input):
    return elu_backward_op(grad_output, self_or_result, *_scalars(alpha, scale, input_scale, is_result),
                           out=grad_input)


aten = torch.ops.aten


def _call(grad_output, x, alpha=1.0, scale=1.0, input_scale=1.0, is_result=False):
    """elu_backward with the operands first, as the shared backward samples and perf pass them."""
    return aten.elu_backward.default(grad_output, alpha, scale, input_scale, is_result, x)


def _call_grad_input(grad_output, x, alpha=1.0, scale=1.0, input_scale=1.0, is_result=False, *, grad_input):
    return aten.elu_backward.grad_input(grad_output, alpha, scale, input_scale, is_result, x, grad_input=grad_input)


SPECS = [
    OpSpec(
        name="elu_backward", family="pointwise",
        impls={"elu_backward": elu_backward, "elu_backward.grad_input": elu_backward_grad_input},
        call=_call,
        samples=without_values(combined(
            backward_samples(grad_input=("elu_backward.grad_input", _call_grad_input), rejects=(torch.int64,)),
            ("result", backward_samples(extra={"alpha": 0.7, "scale": 1.5, "input_scale": 0.5, "is_result": True},
                                        domain=dict(low=-0.7, high=3.0))),
            ("input-scales", backward_samples(extra={"alpha": -0.5, "scale": 2.0, "input_scale": 3.0},
                                              broadcast=False)),
            error_calls(("error-negative-alpha-result", lambda g, x: _call(g, x, alpha=-1.0, is_result=True)),
                        operands=2),
        ), [float("nan")]),
        dtypes=FLOATS, perf=pointwise_perf(2),
    ),
]
