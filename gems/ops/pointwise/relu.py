"""relu: max(x, 0) with NaN kept; bool raises ATen's RuntimeError. Its backward is threshold_backward."""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS, INTS
from gems.ops.pointwise.shared import ORDERED_ZEROS, checked_overloads, pointwise_perf, unary_samples
from gems.spec import OpSpec


@triton.jit
def _relu(x):
    # where, not maximum: NaN stays NaN (max.f32 on the GPU returns the other operand).
    if ORDERED_ZEROS:
        r = tl.where(x <= 0, 0, x)  # the device's ATen takes max(x, 0): -0.0 becomes +0.0
    else:
        r = tl.where(x < 0, 0, x)
    return r


relu_op = PointwiseOp("relu", _relu, operands=1)


def _reject_bool_relu(x):
    if x.dtype == torch.bool:
        raise RuntimeError("Boolean inputs not supported for relu")


def _relu_out(x):
    """torch.relu has no ``out=``; the overload does."""
    return torch.ops.aten.relu.out(x, out=torch.empty(0, dtype=x.dtype, device=x.device))


SPECS = [
    OpSpec(
        name="relu", family="pointwise", impls=checked_overloads(relu_op, "relu", _reject_bool_relu),
        call=torch.relu,
        samples=unary_samples(out=("relu.out", _relu_out), inplace=("relu_", torch.relu_), grad=True,
                              grad_expects=("relu", "threshold_backward"), rejects=(torch.bool,)),
        dtypes=FLOATS + INTS, perf=pointwise_perf(1),
    ),
]
