"""reciprocal: 1 / x, correctly rounded (fp32 ``1 / x`` is ``div.full.f32``, 2 ulp, on the GPU).
Integer and bool inputs arrive converted to the default float dtype
(Promotion.INT_TO_FLOAT), as in ATen; fp16/bf16 arrive as fp32.
"""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)

from gems.codegen.pointwise import PointwiseOp, Promotion, unary_overloads
from gems.dtypes import ALL
from gems.ops.pointwise.shared import div_rn, pointwise_perf, unary_samples
from gems.spec import OpSpec


@triton.jit
def _reciprocal(x):
    return div_rn(1.0, x)


reciprocal_op = PointwiseOp("reciprocal", _reciprocal, operands=1, promotion=Promotion.INT_TO_FLOAT)

SPECS = [
    OpSpec(
        name="reciprocal", family="pointwise", impls=unary_overloads(reciprocal_op, "reciprocal"),
        call=torch.reciprocal,
        samples=unary_samples(out="reciprocal.out", inplace=("reciprocal_", torch.reciprocal_), grad=True),
        dtypes=ALL, perf=pointwise_perf(1),
    ),
]
