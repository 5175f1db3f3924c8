"""native_dropout_backward (and its out= form): ``grad_output * mask * scale`` through the pointwise
generator; the mask (bool, as native_dropout makes it) is read as it is and counts as 0 or 1, so a
dropped element's gradient is ``grad * 0`` (a signed zero, NaN for NaN) as on ATen's CPU and CUDA.
``scale`` stays at the compute precision, as ATen multiplies by it."""

import torch
import triton

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS
from gems.ops.random.philox import random_samples
from gems.spec import OpSpec


@triton.jit
def _masked_scale(grad, mask, scale):
    return grad * mask.to(grad.dtype) * scale


_op = PointwiseOp("native_dropout_backward", _masked_scale, operands=2, scalars=("scale",), promote_operands=(0,),
                  dtypes=FLOATS, round_scalars=False)


def native_dropout_backward(grad_output, mask, scale):
    return _op(grad_output, mask, scale)


def native_dropout_backward_out(grad_output, mask, scale, *, out):
    return _op(grad_output, mask, scale, out=out)


SPECS = [
    OpSpec(
        name="native_dropout_backward", family="random",
        impls={"native_dropout_backward": native_dropout_backward,
               "native_dropout_backward.out": native_dropout_backward_out},
        call=torch.ops.aten.native_dropout_backward, samples=random_samples("dropout_backward_samples"),
        dtypes=FLOATS,
    ),
]
