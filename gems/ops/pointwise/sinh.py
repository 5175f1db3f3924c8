"""sinh: hyperbolic sine, libdevice's sinh (fp32 overflows to +-inf past |x| ~ 89.4).
Integer and bool inputs arrive converted to the default float dtype (Promotion.INT_TO_FLOAT), as in ATen;
fp16/bf16 are computed in fp32.
"""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp, Promotion
from gems.ops.pointwise.unary_shared import unary_spec, value_samples

# Integers up to 88: from 89 on ATen's CPU result for integer inputs (the oracle of those cases, vectorized fp32)
# overflows to inf where the function is still finite; floats reach 89+ in the value samples.
DOMAIN = dict(int_low=-88, int_high=88)


@triton.jit
def _sinh(x):
    return libdevice.sinh(x)


sinh_op = PointwiseOp("sinh", _sinh, operands=1, promotion=Promotion.INT_TO_FLOAT)

SPECS = [
    unary_spec(sinh_op, torch.sinh, domain=DOMAIN,
               more=(value_samples([88.0, 89.0, -89.3, 89.5, 90.0, -89.5, -0.0, 1e-5]),)),
]
