"""expm1: e^x - 1 without cancellation near 0, libdevice's expm1.
Integer and bool inputs arrive converted to the default float dtype (Promotion.INT_TO_FLOAT), as in ATen;
fp16/bf16 are computed in fp32.
special_expm1, a CompositeImplicitAutograd alias, runs this operator's overloads.
"""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp, Promotion
from gems.ops.pointwise.unary_shared import alias_calls, unary_spec, value_samples


@triton.jit
def _expm1(x):
    return libdevice.expm1(x)


expm1_op = PointwiseOp("expm1", _expm1, operands=1, promotion=Promotion.INT_TO_FLOAT)

SPECS = [
    unary_spec(expm1_op, torch.expm1,
               more=(value_samples([1e-10, -1e-10, -0.0, 88.7, 89.0, -100.0]),
                     alias_calls(("special_expm1", torch.special.expm1, "expm1")))),
]
