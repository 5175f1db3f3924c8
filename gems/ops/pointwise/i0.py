"""i0: the modified Bessel function of the first kind of order 0 (bessel_shared.py: power series, then the
asymptotic expansion, accurate to the rounding of fp32 and fp64). Unlike ATen's exp(x) * chebyshev, it
stays finite up to the function's own overflow (|x| ~ 91.9 in fp32). Integers and bool give the default
float dtype; fp16/bf16 are computed in fp32. Its derivative is special_i1.
"""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)

from gems.codegen.pointwise import PointwiseOp, Promotion
from gems.ops.pointwise.bessel_shared import bessel
from gems.ops.pointwise.unary_shared import alias_calls, unary_spec, value_samples

DOMAIN = dict(low=-12.0, high=12.0, int_low=-30, int_high=30)  # both series and the switch between them


@triton.jit
def _i0(x):
    return bessel(x, 0)


i0_op = PointwiseOp("i0", _i0, operands=1, promotion=Promotion.INT_TO_FLOAT)

SPECS = [
    unary_spec(i0_op, torch.i0, domain=DOMAIN,
               more=(value_samples([10.0, ("ulp-above", 10.0), 20.0, ("ulp-above", 20.0), 88.0, 91.0, 93.0, -700.0,
                                    1e-20, 0.0, -0.0]),
                     alias_calls(("special_i0", torch.special.i0, "i0"), domain=DOMAIN))),
]
