"""hardsigmoid: min(max(x + 3, 0), 6) / 6, the clamps passing NaN through as ATen's. The division is a
correctly rounded one, as ATen's CPU kernel computes it; its CUDA kernel multiplies by the fp32 constant
1.0f / 6.0f instead (for fp64 too: 3e-8 relative off), within every dtype's tolerance of the exact
quotient. Floating dtypes only. Its backward is hardsigmoid_backward.
"""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS
from gems.ops.pointwise.shared import fdiv
from gems.ops.pointwise.unary_shared import unary_spec


@triton.jit
def clamp_to_six(x):
    """min(max(x, 0), 6) with std::max / std::min's NaN behaviour (NaN passes)."""
    low = tl.where(x < 0, 0.0, x)
    return tl.where(low > 6, 6.0, low)


@triton.jit
def _hardsigmoid(x):
    return fdiv(clamp_to_six(x + 3.0), 6.0)


hardsigmoid_op = PointwiseOp("hardsigmoid", _hardsigmoid, operands=1, dtypes=FLOATS)

SPECS = [
    unary_spec(hardsigmoid_op, torch._C._nn.hardsigmoid, inplace=torch._C._nn.hardsigmoid_, dtypes=FLOATS,
               rejects=(torch.int64, torch.bool), grad_expects=("hardsigmoid", "hardsigmoid_backward"),
               domain=dict(low=-5.0, high=5.0)),
]
