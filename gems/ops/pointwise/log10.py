"""log10: base-10 logarithm, libdevice's log10; -inf at +-0, NaN below 0.
Integer and bool inputs arrive converted to the default float dtype (Promotion.INT_TO_FLOAT), as in ATen;
fp16/bf16 are computed in fp32.
"""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp, Promotion
from gems.ops.pointwise.unary_shared import unary_spec, value_samples

DOMAIN = dict(low=0.0, high=8.0, int_low=0, int_high=100)  # random inputs where the function is real from 0 on


@triton.jit
def _log10(x):
    return libdevice.log10(x)


log10_op = PointwiseOp("log10", _log10, operands=1, promotion=Promotion.INT_TO_FLOAT)

SPECS = [
    unary_spec(log10_op, torch.log10, domain=DOMAIN,
               more=(value_samples([0.0, -0.0, -1.0, 10.0, 1000.0, ("ulp-above", 0.0)]),)),
]
