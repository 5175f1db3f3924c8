"""sqrt: the correctly rounded square root, as ATen's: fp32 takes ``tl.sqrt_rn`` (``tl.sqrt`` is
``sqrt.approx.ftz.f32`` on NVIDIA GPUs, which also flushes subnormal inputs), fp64 ``tl.sqrt``
(``sqrt.rn.f64``; ``sqrt_rn`` does not compile for fp64). sqrt(-0.0) is -0.0, NaN below 0.
Integer and bool inputs arrive converted to the default float dtype (Promotion.INT_TO_FLOAT), as in ATen;
fp16/bf16 are computed in fp32.
"""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import PointwiseOp, Promotion
from gems.ops.pointwise.unary_shared import unary_spec, value_samples

DOMAIN = dict(low=0.0, high=8.0, int_low=0, int_high=100)  # random inputs where the root is real


@triton.jit
def _sqrt(x):
    if x.dtype == tl.float64:
        root = tl.sqrt(x)
    else:
        root = tl.sqrt_rn(x)
    return root


sqrt_op = PointwiseOp("sqrt", _sqrt, operands=1, promotion=Promotion.INT_TO_FLOAT)

SPECS = [
    unary_spec(sqrt_op, torch.sqrt, domain=DOMAIN,
               more=(value_samples([0.0, -0.0, -1.0, ("ulp-below", 0.0), 2.0, ("ulp-above", 1.0)]),)),
]
