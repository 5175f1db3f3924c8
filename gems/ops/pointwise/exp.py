"""exp: e^x. ``tl.exp`` on fp32 compiles to ``ex2.approx.f32(x * log2e)`` (triton 3.6, sm_90 PTX), and
rounding ``x * log2e`` alone costs up to 2.6e-6 relative (some 20 ulp) at |x| = 80, so exp uses
libdevice's ``expf``.
Integer and bool inputs arrive converted to the default float dtype
(Promotion.INT_TO_FLOAT), as in ATen; fp16/bf16 arrive as fp32.
"""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp, Promotion, unary_overloads
from gems.dtypes import ALL
from gems.ops.pointwise.shared import combined, edge_samples, pointwise_perf, unary_samples
from gems.spec import OpSpec


@triton.jit
def _exp(x):
    return libdevice.exp(x)


exp_op = PointwiseOp("exp", _exp, operands=1, promotion=Promotion.INT_TO_FLOAT)

SPECS = [
    OpSpec(
        name="exp", family="pointwise", impls=unary_overloads(exp_op, "exp"), call=torch.exp,
        samples=combined(unary_samples(out="exp.out", inplace=("exp_", torch.exp_), grad=True),
                         edge_samples("subnormal_intermediate_samples", torch.exp, inverse=torch.log, expects="exp")),
        dtypes=ALL, perf=pointwise_perf(1),
    ),
]
