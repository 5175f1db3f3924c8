"""rsqrt: 1 / sqrt(x). ``tl.rsqrt`` is ``rsqrt.approx.ftz.f32``, which flushes subnormal inputs to zero
(inf where ATen is finite), so rsqrt uses the correctly rounded ``sqrt_rn`` and ``div_rn``.
Integer and bool inputs arrive converted to the default float dtype
(Promotion.INT_TO_FLOAT), as in ATen; fp16/bf16 arrive as fp32.
"""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import PointwiseOp, Promotion, unary_overloads
from gems.dtypes import ALL
from gems.ops.pointwise.shared import div_rn, pointwise_perf, unary_samples
from gems.spec import OpSpec

# rsqrt of a negative number is NaN: keep most random values where the function is defined.
_POSITIVE = {"low": 0.01, "high": 10.0, "int_low": 0, "int_high": 100}


@triton.jit
def _rsqrt(x):
    # Correctly rounded square root and division: subnormal inputs keep their finite result,
    # rsqrt(-0) is -inf and rsqrt(+inf) is 0, as in IEEE arithmetic and ATen.
    if x.dtype == tl.float64:
        root = tl.sqrt(x)
    else:
        root = tl.sqrt_rn(x)
    return div_rn(1.0, root)


rsqrt_op = PointwiseOp("rsqrt", _rsqrt, operands=1, promotion=Promotion.INT_TO_FLOAT)

SPECS = [
    OpSpec(
        name="rsqrt", family="pointwise", impls=unary_overloads(rsqrt_op, "rsqrt"), call=torch.rsqrt,
        samples=unary_samples(out="rsqrt.out", inplace=("rsqrt_", torch.rsqrt_), grad=True, domain=_POSITIVE),
        dtypes=ALL, perf=pointwise_perf(1, domain=_POSITIVE),
    ),
]
