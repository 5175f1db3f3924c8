"""special_i0e: I0(x) e^-|x|, the exponentially scaled modified Bessel function of order 0
(bessel_shared.py), finite for every finite x. Integers and bool give the default float dtype; fp16/bf16
are computed in fp32. Its derivative calls special_i1e and sgn.
"""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)

from gems.codegen.pointwise import PointwiseOp, Promotion
from gems.ops.pointwise.bessel_shared import bessel_scaled
from gems.ops.pointwise.i0 import DOMAIN
from gems.ops.pointwise.unary_shared import unary_spec, value_samples


@triton.jit
def _special_i0e(x):
    return bessel_scaled(x, 0)


special_i0e_op = PointwiseOp("special_i0e", _special_i0e, operands=1, promotion=Promotion.INT_TO_FLOAT)

SPECS = [
    unary_spec(special_i0e_op, torch.special.i0e, inplace=False, domain=DOMAIN,
               more=(value_samples([10.0, ("ulp-above", 10.0), 20.0, ("ulp-above", 20.0), 100.0, -1e4, 1e30]),)),
]
