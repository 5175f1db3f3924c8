"""hardswish: x * min(max(x + 3, 0), 6) / 6, NaN passing the clamps (hardsigmoid.py). ATen's kernels
multiply first, (x * clamp) / 6 on the CPU and x * clamp * (1.0f / 6.0f) on CUDA, so their fp32 result
overflows to inf from |x| = max / 6 on, where the function (and the float64 oracle) is finite: for fp16,
bf16 and fp32 gems scales the clamp first, x * (clamp * (1 / 6)). fp64 keeps ATen's CPU order, whose overflow
near the fp64 maximum is the float64 oracle's own. Floating dtypes only. Its backward is hardswish_backward.
"""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS
from gems.ops.pointwise.hardsigmoid import ONE_SIXTH, clamp_to_six
from gems.ops.pointwise.unary_shared import unary_spec


@triton.jit
def _hardswish(x):
    if x.dtype == tl.float64:
        r = (x * clamp_to_six(x + 3.0)) / 6.0
    else:
        r = x * (clamp_to_six(x + 3.0) * ONE_SIXTH)
    return r


hardswish_op = PointwiseOp("hardswish", _hardswish, operands=1, dtypes=FLOATS)

SPECS = [
    unary_spec(hardswish_op, torch._C._nn.hardswish, inplace=torch._C._nn.hardswish_, dtypes=FLOATS,
               rejects=(torch.int64, torch.bool), grad_expects=("hardswish", "hardswish_backward"),
               domain=dict(low=-5.0, high=5.0)),
]
