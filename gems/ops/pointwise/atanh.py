"""atanh: inverse hyperbolic tangent, libdevice's atanh; +-inf at +-1, NaN beyond.
Integer and bool inputs arrive converted to the default float dtype (Promotion.INT_TO_FLOAT), as in ATen;
fp16/bf16 are computed in fp32.
arctanh, a CompositeImplicitAutograd alias, runs this operator's overloads.
"""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp, Promotion
from gems.ops.pointwise.unary_shared import alias_calls, unary_spec, value_samples

# Random inputs where the function is real, short of +-1, where its derivative's fp16 rounding (ATen's
# formula) leaves the float64 oracle's tolerance; the domain edges have their own samples.
DOMAIN = dict(low=-0.95, high=0.95, int_low=-1, int_high=1)


@triton.jit
def _atanh(x):
    return libdevice.atanh(x)


atanh_op = PointwiseOp("atanh", _atanh, operands=1, promotion=Promotion.INT_TO_FLOAT)

SPECS = [
    unary_spec(atanh_op, torch.atanh, domain=DOMAIN,
               more=(value_samples([-1.0, 1.0, -0.0, ("ulp-above", 1.0), ("ulp-below", -1.0), ("ulp-below", 1.0)]),
                     alias_calls(("arctanh", torch.arctanh, "atanh"), ("arctanh-inplace", torch.arctanh_, "atanh_"),
                                 domain=DOMAIN))),
]
