"""atan: arc tangent, libdevice's atan.
Integer and bool inputs arrive converted to the default float dtype (Promotion.INT_TO_FLOAT), as in ATen;
fp16/bf16 are computed in fp32.
arctan, a CompositeImplicitAutograd alias, runs this operator's overloads.
"""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp, Promotion
from gems.ops.pointwise.unary_shared import alias_calls, unary_spec


@triton.jit
def _atan(x):
    return libdevice.atan(x)


atan_op = PointwiseOp("atan", _atan, operands=1, promotion=Promotion.INT_TO_FLOAT)

SPECS = [
    unary_spec(atan_op, torch.atan,
               more=(alias_calls(("arctan", torch.arctan, "atan")),)),
]
