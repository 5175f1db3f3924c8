"""erf (``tl.erf`` compiles to libdevice's erf). Its derivative calls exp: the grad sample proves both ran.
Integer and bool inputs arrive converted to the default float dtype
(Promotion.INT_TO_FLOAT), as in ATen; fp16/bf16 arrive as fp32.
"""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import PointwiseOp, Promotion, unary_overloads
from gems.dtypes import ALL
from gems.ops.pointwise.shared import pointwise_perf, unary_samples
from gems.spec import OpSpec


@triton.jit
def _erf(x):
    return tl.erf(x)


erf_op = PointwiseOp("erf", _erf, operands=1, promotion=Promotion.INT_TO_FLOAT)

SPECS = [
    OpSpec(
        name="erf", family="pointwise", impls=unary_overloads(erf_op, "erf"), call=torch.erf,
        samples=unary_samples(out="erf.out", inplace=("erf_", torch.erf_), grad=True, grad_expects=('erf', 'exp')),
        dtypes=ALL, perf=pointwise_perf(1),
    ),
]
