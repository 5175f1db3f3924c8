"""sinh: hyperbolic sine, libdevice's sinh (fp32 overflows to +-inf past |x| ~ 89.4); for fp16/bf16 results a
shorter fp32 form (_sinh_for_16bit).
Integer and bool inputs arrive converted to the default float dtype (Promotion.INT_TO_FLOAT), as in ATen;
fp16/bf16 are computed in fp32.
"""

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp, Promotion
from gems.ops.pointwise.unary_shared import unary_spec, value_samples

# Integers up to 88: from 89 on ATen's CPU result for integer inputs (the oracle of those cases, vectorized fp32)
# overflows to inf where the function is still finite; floats reach 89+ in the value samples.
DOMAIN = dict(int_low=-88, int_high=88)
LN2 = tl.constexpr(0.6931471805599453)
# 1/3!, 1/5!, 1/7!
S3, S5, S7 = tl.constexpr(0.16666666666666666), tl.constexpr(0.008333333333333333), tl.constexpr(1.984126984126984e-4)


@triton.jit
def _sinh_for_16bit(x):
    """sinh(x) in fp32 for a result stored in fp16 or bf16: below |x| = 1 its odd series to x^7 (relative error
    under 3e-6), from there h - 1 / (4 h) with h = e^|x| / 2 = e^(|x| - ln 2) (Triton's fast exp and reciprocal;
    no cancellation there; h overflows where sinh does, past 89.4, and e^|x| would from 88.7). Within 0.5 ulp
    over 64M draws on an H200, as ATen's; 71-77 us at 64M fp16/bf16 against libdevice's sinh 88, ATen 72-80."""
    ax = tl.abs(x)
    z = x * x
    series = x * (1.0 + z * (S3 + z * (S5 + z * S7)))
    h = tl.exp(ax - LN2)
    large = h - 0.25 / h
    return tl.where(ax < 1.0, series, tl.where(x < 0, 0.0 - large, large))


@triton.jit
def _sinh(x, COMMON: tl.constexpr):
    if (COMMON == tl.float16) or (COMMON == tl.bfloat16):
        r = _sinh_for_16bit(x)
    else:
        r = libdevice.sinh(x)
    return r


sinh_op = PointwiseOp("sinh", _sinh, operands=1, promotion=Promotion.INT_TO_FLOAT, common_arg=True)

SPECS = [
    unary_spec(sinh_op, torch.sinh, domain=DOMAIN,
               more=(value_samples([88.0, 89.0, -89.3, 89.5, 90.0, -89.5, -0.0, 1e-5]),)),
]
