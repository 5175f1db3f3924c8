"""log1p: log(1 + x) without cancellation near 0, libdevice's log1p; -inf at -1, NaN below.
Integer and bool inputs arrive converted to the default float dtype (Promotion.INT_TO_FLOAT), as in ATen;
fp16/bf16 are computed in fp32.
special_log1p, a CompositeImplicitAutograd alias, runs this operator's overloads.
"""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp, Promotion
from gems.ops.pointwise.unary_shared import alias_calls, unary_spec, value_samples

DOMAIN = dict(low=-1.0, high=6.0, int_low=-1, int_high=100)  # random inputs where the function is real from -1 on


@triton.jit
def _log1p(x):
    return libdevice.log1p(x)


log1p_op = PointwiseOp("log1p", _log1p, operands=1, promotion=Promotion.INT_TO_FLOAT)

SPECS = [
    unary_spec(log1p_op, torch.log1p, domain=DOMAIN,
               more=(value_samples([-1.0, ("ulp-below", -1.0), ("ulp-above", -1.0), 1e-10, -1e-10, -0.0]),
                     alias_calls(("special_log1p", torch.special.log1p, "log1p"), domain=DOMAIN))),
]
