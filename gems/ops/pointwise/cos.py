"""cos. ``tl.cos`` compiles to a libdevice call on the GPU; calling libdevice by name lets the interpreter
evaluate it with torch's CPU cos, bit for bit ATen's (numpy's differs by 1 ulp, and the float results of
integer inputs are compared exactly). Its derivative is computed by sin: the grad sample proves both ran.
Integer and bool inputs arrive converted to the default float dtype
(Promotion.INT_TO_FLOAT), as in ATen; fp16/bf16 arrive as fp32.
"""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp, Promotion, unary_overloads
from gems.dtypes import ALL
from gems.ops.pointwise.shared import pointwise_perf, unary_samples
from gems.spec import OpSpec


@triton.jit
def _cos(x):
    return libdevice.cos(x)


cos_op = PointwiseOp("cos", _cos, operands=1, promotion=Promotion.INT_TO_FLOAT)

SPECS = [
    OpSpec(
        name="cos", family="pointwise", impls=unary_overloads(cos_op, "cos"), call=torch.cos,
        samples=unary_samples(out="cos.out", inplace=("cos_", torch.cos_), grad=True, grad_expects=('cos', 'sin')),
        dtypes=ALL, perf=pointwise_perf(1),
    ),
]
