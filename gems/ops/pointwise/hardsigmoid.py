"""hardsigmoid: min(max(x + 3, 0), 6) / 6, the clamps passing NaN through as ATen's. fp16, bf16 and fp32
multiply by the fp32 constant 1 / 6, as ATen's CUDA kernel does (for fp64 too there: 3e-8 relative off);
fp64 divides, as ATen's CPU kernel does. Both are within every dtype's tolerance of the exact quotient.
Floating dtypes only. Its backward is hardsigmoid_backward.
"""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS
from gems.ops.pointwise.unary_shared import unary_spec

# fp32 1 / 6: clamp * ONE_SIXTH is within 1 ulp of clamp / 6 (fp32 tolerance: about 11 ulp) and never
# above 1 (6 * ONE_SIXTH rounds to 1.0). A correctly rounded tl.div_rn costs ~25 instructions per element
# (FCHK, a slow-path call) and made fp16/bf16 compute-bound: hardswish 0.51x ATen at 64M on an H200, and
# hardsigmoid 0.53x (fe82a63).
ONE_SIXTH = tl.constexpr(1.0 / 6.0)


@triton.jit
def clamp_to_six(x):
    """min(max(x, 0), 6) with std::max / std::min's NaN behaviour (NaN passes)."""
    low = tl.where(x < 0, 0.0, x)
    return tl.where(low > 6, 6.0, low)


@triton.jit
def _hardsigmoid(x):
    if x.dtype == tl.float64:
        r = clamp_to_six(x + 3.0) / 6.0
    else:
        r = clamp_to_six(x + 3.0) * ONE_SIXTH
    return r


hardsigmoid_op = PointwiseOp("hardsigmoid", _hardsigmoid, operands=1, dtypes=FLOATS)

SPECS = [
    unary_spec(hardsigmoid_op, torch._C._nn.hardsigmoid, inplace=torch._C._nn.hardsigmoid_, dtypes=FLOATS,
               rejects=(torch.int64, torch.bool), grad_expects=("hardsigmoid", "hardsigmoid_backward"),
               domain=dict(low=-5.0, high=5.0)),
]
