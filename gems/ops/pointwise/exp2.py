"""exp2: 2^x, libdevice's exp2.
Integer and bool inputs arrive converted to the default float dtype (Promotion.INT_TO_FLOAT), as in ATen;
fp16/bf16 are computed in fp32.
special_exp2, a CompositeImplicitAutograd alias, runs this operator's overloads.
"""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp, Promotion
from gems.ops.pointwise.unary_shared import alias_calls, unary_spec, value_samples


@triton.jit
def _exp2(x):
    return libdevice.exp2(x)


exp2_op = PointwiseOp("exp2", _exp2, operands=1, promotion=Promotion.INT_TO_FLOAT)

SPECS = [
    unary_spec(exp2_op, torch.exp2,
               more=(value_samples([127.0, 128.0, -149.0, -150.0, 1024.0, -0.0]),
                     alias_calls(("special_exp2", torch.special.exp2, "exp2")))),
]
