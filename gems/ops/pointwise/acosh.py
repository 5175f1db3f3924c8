"""acosh: inverse hyperbolic cosine, libdevice's acosh; NaN below 1.
Integer and bool inputs arrive converted to the default float dtype (Promotion.INT_TO_FLOAT), as in ATen;
fp16/bf16 are computed in fp32.
arccosh, a CompositeImplicitAutograd alias, runs this operator's overloads.
"""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp, Promotion
from gems.ops.pointwise.unary_shared import alias_calls, unary_spec, value_samples

# Random inputs where the function is real, above 1, where its derivative's fp16 rounding (ATen's formula)
# leaves the float64 oracle's tolerance; the domain edge has its own samples.
DOMAIN = dict(low=1.05, high=6.0, int_low=0, int_high=100)


@triton.jit
def _acosh(x):
    return libdevice.acosh(x)


acosh_op = PointwiseOp("acosh", _acosh, operands=1, promotion=Promotion.INT_TO_FLOAT)

SPECS = [
    unary_spec(acosh_op, torch.acosh, domain=DOMAIN,
               more=(value_samples([1.0, ("ulp-below", 1.0), ("ulp-above", 1.0), 0.0, -1.0]),
                     alias_calls(("arccosh", torch.arccosh, "acosh"), domain=DOMAIN))),
]
