"""sin, through libdevice by name for the reason given in cos.py. Its derivative is computed by cos: the
grad sample proves both ran. Integer and bool inputs arrive converted to the default float dtype
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
def _sin(x):
    return libdevice.sin(x)


sin_op = PointwiseOp("sin", _sin, operands=1, promotion=Promotion.INT_TO_FLOAT)

SPECS = [
    OpSpec(
        name="sin", family="pointwise", impls=unary_overloads(sin_op, "sin"), call=torch.sin,
        samples=unary_samples(out="sin.out", inplace=("sin_", torch.sin_), grad=True, grad_expects=('sin', 'cos')),
        dtypes=ALL, perf=pointwise_perf(1),
    ),
]
