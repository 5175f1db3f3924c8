"""rrelu_with_noise_backward (and its out= form), as ATen's composite: in training ``noise * grad_output``
(whatever the bounds); otherwise the leaky ReLU's backward of slope (lower + upper) / 2,
``grad`` where self > 0 and ``grad * slope`` elsewhere (NaN included), refusing a negative slope on a
result computed in place (self_is_result), as ATen's leaky_relu_backward does."""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS
from gems.ops.random.philox import random_samples
from gems.spec import OpSpec


@triton.jit
def _times(noise, grad):
    return noise * grad


@triton.jit
def _leaky_backward(grad, x, slope):
    return tl.where(x > 0, grad, grad * slope)


_times_op = PointwiseOp("rrelu_noise_grad", _times, operands=2, dtypes=FLOATS)
_leaky_op = PointwiseOp("rrelu_leaky_grad", _leaky_backward, operands=2, scalars=("slope",), dtypes=FLOATS,
                        round_scalars=False)


def rrelu_with_noise_backward_out(grad_output, self, noise, lower, upper, training, self_is_result, *, out=None):
    if training:
        return _times_op(noise, grad_output, out=out)
    slope = (float(lower) + float(upper)) / 2
    if self_is_result and slope < 0:
        raise RuntimeError("In-place leakyReLu backward calculation is triggered with a negative slope which is not "
                           "supported. This is caused by calling in-place forward function with a negative slope, "
                           "please call out-of-place version instead. File an issue at "
                           "https://github.com/pytorch/pytorch if you do require supporting in-place leakRelu "
                           "backward calculation with negative slope")
    return _leaky_op(grad_output, self, slope, out=out)


def rrelu_with_noise_backward(grad_output, self, noise, lower, upper, training, self_is_result):
    return rrelu_with_noise_backward_out(grad_output, self, noise, lower, upper, training, self_is_result)


SPECS = [
    OpSpec(
        name="rrelu_with_noise_backward", family="random",
        impls={"rrelu_with_noise_backward": rrelu_with_noise_backward,
               "rrelu_with_noise_backward.out": rrelu_with_noise_backward_out},
        call=torch.ops.aten.rrelu_with_noise_backward, samples=random_samples("rrelu_backward_samples"),
        dtypes=FLOATS,
    ),
]
