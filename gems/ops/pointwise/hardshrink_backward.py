"""hardshrink_backward(grad, x, lambd): 0 where -lambd <= x <= lambd, else grad (NaN x keeps the
gradient); lambd in the tensor's dtype (hardshrink.py). softshrink_backward is the same function.

NaN x is left out of the special-value samples: ATen's CPU kernel answers 0 there in its vectorized
loop and grad in its scalar tail; gems gives grad, as ATen's CUDA formula.
"""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS
from gems.ops.pointwise.hardshrink import in_band
from gems.ops.pointwise.shared import backward_samples, combined, pointwise_perf
from gems.ops.pointwise.unary_shared import backward_overloads_with_numbers, without_values
from gems.spec import OpSpec

NAN = float("nan")


@triton.jit
def shrink_backward(grad, x, lambd, COMMON: tl.constexpr):
    return tl.where(in_band(x, lambd, COMMON), 0.0, grad)


hardshrink_backward_op = PointwiseOp("hardshrink_backward", shrink_backward, operands=2, scalars=("lambd",),
                                     dtypes=FLOATS, common_arg=True)


aten = torch.ops.aten

SPECS = [
    OpSpec(
        name="hardshrink_backward", family="pointwise",
        impls=backward_overloads_with_numbers(hardshrink_backward_op, "hardshrink_backward"),
        call=aten.hardshrink_backward.default,
        samples=combined(
            without_values(backward_samples(grad_input=("hardshrink_backward.grad_input",
                                                        aten.hardshrink_backward.grad_input),
                                            scalars=(0.5,), rejects=(torch.int64,)), [NAN]),
            ("lambd", without_values(backward_samples(scalars=(0.125,), domain=dict(low=-0.3, high=0.3),
                                                      broadcast=False), [NAN])),
        ),
        dtypes=FLOATS, perf=pointwise_perf(2, scalars=(0.5,)),
    ),
]
