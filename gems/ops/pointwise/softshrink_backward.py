"""softshrink_backward(grad, x, lambd): 0 where -lambd <= x <= lambd, else grad: ATen's shrink backward,
the same kernel as hardshrink_backward's (hardshrink_backward.py).

NaN x is left out of the special-value samples: ATen's CPU kernel answers 0 there in its vectorized
loop and grad in its scalar tail; gems gives grad, as ATen's CUDA formula.
"""

import torch
import triton  # noqa: F401
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS
from gems.ops.pointwise.hardshrink_backward import shrink_backward
from gems.ops.pointwise.shared import backward_samples, combined, pointwise_perf
from gems.ops.pointwise.unary_shared import backward_overloads_with_numbers, without_values
from gems.spec import OpSpec

NAN = float("nan")

softshrink_backward_op = PointwiseOp("softshrink_backward", shrink_backward, operands=2, scalars=("lambd",),
                                     dtypes=FLOATS, common_arg=True)


aten = torch.ops.aten

SPECS = [
    OpSpec(
        name="softshrink_backward", family="pointwise",
        impls=backward_overloads_with_numbers(softshrink_backward_op, "softshrink_backward"),
        call=aten.softshrink_backward.default,
        samples=combined(
            without_values(backward_samples(grad_input=("softshrink_backward.grad_input",
                                                        aten.softshrink_backward.grad_input),
                                            scalars=(0.5,), rejects=(torch.int64,)), [NAN]),
            ("lambd", without_values(backward_samples(scalars=(0.125,), domain=dict(low=-0.3, high=0.3),
                                                      broadcast=False), [NAN])),
        ),
        dtypes=FLOATS, perf=pointwise_perf(2, scalars=(0.5,)),
    ),
]
