"""hardswish_backward(grad, x): 0 for x <= -3, grad (x / 3 + 0.5) for x < 3 (a correctly rounded division,
as ATen's), grad from 3 on and for NaN x (ATen's CUDA and CPU kernels since the boundaries moved to
``<= -3`` / ``< 3``). Its ``.out`` overload is named ``out``, not ``grad_input``.

NaN x is left out of the special-value samples: ATen's CPU kernel answers NaN (fp64) there in its vectorized
loop and grad in its scalar tail; gems gives grad, as ATen's CUDA formula.
"""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS
from gems.ops.pointwise.shared import backward_samples, combined, fdiv, pointwise_perf
from gems.ops.pointwise.unary_shared import value_samples, without_values
from gems.spec import OpSpec


@triton.jit
def _hardswish_backward(grad, x):
    inner = grad * (fdiv(x, 3.0) + 0.5)
    return tl.where(x <= -3.0, 0.0, tl.where(x < 3.0, inner, grad))


hardswish_backward_op = PointwiseOp("hardswish_backward", _hardswish_backward, operands=2, dtypes=FLOATS)


def hardswish_backward_out(grad_output, self, *, out):
    return hardswish_backward_op(grad_output, self, out=out)


aten = torch.ops.aten


def _boundaries(x):
    """The backward at x = -3, 3 and their neighbours, with a gradient of ones."""
    return aten.hardswish_backward.default(torch.ones_like(x), x)


SPECS = [
    OpSpec(
        name="hardswish_backward", family="pointwise",
        impls={"hardswish_backward": hardswish_backward_op, "hardswish_backward.out": hardswish_backward_out},
        call=aten.hardswish_backward.default,
        samples=combined(
            without_values(backward_samples(
                grad_input=("hardswish_backward.out",
                            lambda g, x, *, grad_input: aten.hardswish_backward.out(g, x, out=grad_input)),
                domain=dict(low=-5.0, high=5.0), rejects=(torch.int64,)), [float("nan")]),
            value_samples([-3.0, 3.0, ("ulp-below", -3.0), ("ulp-above", -3.0), ("ulp-below", 3.0), 0.0],
                          call=_boundaries, variant="boundaries")),
        dtypes=FLOATS, perf=pointwise_perf(2),
    ),
]
