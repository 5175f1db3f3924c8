"""asinh: inverse hyperbolic sine, libdevice's asinh.
Integer and bool inputs arrive converted to the default float dtype (Promotion.INT_TO_FLOAT), as in ATen;
fp16/bf16 are computed in fp32.
arcsinh, a CompositeImplicitAutograd alias, runs this operator's overloads.
"""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp, Promotion
from gems.ops.pointwise.unary_shared import alias_calls, unary_spec


@triton.jit
def _asinh(x):
    return libdevice.asinh(x)


asinh_op = PointwiseOp("asinh", _asinh, operands=1, promotion=Promotion.INT_TO_FLOAT)


def _arcsinh_out(x):
    return torch.arcsinh(x, out=torch.empty(0, device=x.device))

SPECS = [
    unary_spec(asinh_op, torch.asinh,
               more=(alias_calls(("arcsinh", torch.arcsinh, "asinh"), ("arcsinh-inplace", torch.arcsinh_, "asinh_"),
                                 ("arcsinh-out", _arcsinh_out, "asinh.out")),)),
]
