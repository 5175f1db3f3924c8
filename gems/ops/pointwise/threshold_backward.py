"""threshold_backward: relu's backward, ``x <= threshold ? 0 : grad`` (NaN x keeps the gradient)."""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS
from gems.ops.pointwise.shared import backward_samples, combined, pointwise_perf
from gems.runtime.registration import Fallback
from gems.spec import OpSpec


@triton.jit
def _threshold_backward(grad, x, threshold):
    # NaN x keeps the gradient, as ATen's `x <= threshold ? 0 : grad`.
    return tl.where(x <= threshold, 0.0, grad)


threshold_backward_op = PointwiseOp("threshold_backward", _threshold_backward, operands=2, scalars=("threshold",),
                                    dtypes=FLOATS)


def _check_operands(grad_output, x):
    # ATen also takes integer tensors here, rounding the threshold to the integer type first; relu's
    # backward never passes them, so they stay with ATen. A float64 threshold is exact: PointwiseOp
    # passes float scalars of a float64 operator as their 64-bit patterns.
    if not (grad_output.is_floating_point() or x.is_floating_point()) and not (
            grad_output.dtype is torch.bool and x.dtype is torch.bool):  # bool: the op raises ATen's error
        raise Fallback("threshold_backward on integer tensors")


def threshold_backward(grad_output, self, threshold):
    _check_operands(grad_output, self)
    return threshold_backward_op(grad_output, self, threshold)


def threshold_backward_grad_input(grad_output, self, threshold, *, grad_input):
    _check_operands(grad_output, self)
    return threshold_backward_op(grad_output, self, threshold, out=grad_input)


aten = torch.ops.aten

SPECS = [
    OpSpec(
        name="threshold_backward", family="pointwise",
        impls={"threshold_backward": threshold_backward,
               "threshold_backward.grad_input": threshold_backward_grad_input},
        call=aten.threshold_backward.default,
        samples=combined(
            backward_samples(grad_input=("threshold_backward.grad_input", aten.threshold_backward.grad_input),
                             scalars=(0,)),
            ("threshold", backward_samples(scalars=(1.5,))),
        ),
        dtypes=FLOATS, perf=pointwise_perf(2, scalars=(0,)),
    ),
]
