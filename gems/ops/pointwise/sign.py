"""sign: -1, 0 or 1 in the input's dtype, ATen's ``(0 < x) - (x < 0)``: NaN and both zeros give +0.0;
bool is its own sign; unsigned integers give 0 or 1. sgn (sgn.py) is the same function on real dtypes.
"""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import PointwiseOp
from gems.ops.pointwise.shared import edge_samples
from gems.ops.pointwise.unary_shared import unary_spec


@triton.jit
def signum(x):
    if x.dtype == tl.int1:
        r = x
    else:
        r = (x > 0).to(x.dtype) - (x < 0).to(x.dtype)
    return r


sign_op = PointwiseOp("sign", signum, operands=1)

SPECS = [
    unary_spec(sign_op, torch.sign, more=(edge_samples("integer_extreme_samples", torch.sign, expects="sign"),)),
]
