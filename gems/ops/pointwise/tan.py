"""tan: tangent, libdevice's tan (with the argument reduction of large |x|).
Integer and bool inputs arrive converted to the default float dtype (Promotion.INT_TO_FLOAT), as in ATen;
fp16/bf16 are computed in fp32.
"""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp, Promotion
from gems.ops.pointwise.unary_shared import unary_spec, value_samples


@triton.jit
def _tan(x):
    return libdevice.tan(x)


tan_op = PointwiseOp("tan", _tan, operands=1, promotion=Promotion.INT_TO_FLOAT)

SPECS = [
    unary_spec(tan_op, torch.tan,
               more=(value_samples([1.5707963267948966, -1.5707963267948966, 1e4, -0.0, 1e30]),)),
]
