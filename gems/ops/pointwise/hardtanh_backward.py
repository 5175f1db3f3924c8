"""hardtanh_backward(grad, x, min_val, max_val): 0 where x <= min_val or x >= max_val, else grad (NaN x
keeps the gradient, as ATen's CUDA formula); the bounds in fp32 for fp16/bf16/fp32 and fp64 for fp64.

NaN x is left out of the special-value samples: ATen's CPU kernel answers 0 there in its vectorized
loop and grad in its scalar tail; gems gives grad, as ATen's CUDA formula.
"""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS
from gems.ops.pointwise.shared import backward_samples, combined, pointwise_perf
from gems.ops.pointwise.unary_shared import backward_overloads_with_numbers, without_values
from gems.spec import OpSpec

NAN = float("nan")


@triton.jit
def _hardtanh_backward(grad, x, min_val, max_val):
    return tl.where((x <= min_val) | (x >= max_val), 0.0, grad)


hardtanh_backward_op = PointwiseOp("hardtanh_backward", _hardtanh_backward, operands=2,
                                   scalars=("min_val", "max_val"), dtypes=FLOATS)


aten = torch.ops.aten

SPECS = [
    OpSpec(
        name="hardtanh_backward", family="pointwise",
        impls=backward_overloads_with_numbers(hardtanh_backward_op, "hardtanh_backward"),
        call=aten.hardtanh_backward.default,
        samples=combined(
            without_values(backward_samples(grad_input=("hardtanh_backward.grad_input",
                                                        aten.hardtanh_backward.grad_input),
                                            scalars=(-1.0, 1.0), rejects=(torch.int64,)), [NAN]),
            ("relu6", without_values(backward_samples(scalars=(0, 6), domain=dict(low=-3.0, high=9.0),
                                                      broadcast=False), [NAN])),
        ),
        dtypes=FLOATS, perf=pointwise_perf(2, scalars=(-1.0, 1.0)),
    ),
]
