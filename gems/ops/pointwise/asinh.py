"""asinh: inverse hyperbolic sine; fp32 through a log1p of its own (_asinh_f32), fp16/bf16 (computed in fp32)
through one logarithm (_asinh_for_16bit), fp64 libdevice's asinh.
Integer and bool inputs arrive converted to the default float dtype (Promotion.INT_TO_FLOAT), as in ATen;
fp16/bf16 are computed in fp32.
arcsinh, a CompositeImplicitAutograd alias, runs this operator's overloads.
"""

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp, Promotion
from gems.ops.pointwise.shared import log1p_reduced
from gems.ops.pointwise.unary_shared import alias_calls, unary_spec

LN2 = tl.constexpr(0.6931471805599453)
INF = tl.constexpr(float("inf"))
# Above 2^32, sqrt(1 + a^2) = a within 2^-65 relative: asinh(a) = log(2a) = log1p(a) + ln 2 within 2^-32.
LARGE = tl.constexpr(4294967296.0)
# Below 2^-12, asinh(a) = a (the next term, a^3 / 6, is under 2^-26 relative): exact for subnormals too.
SMALL = tl.constexpr(0.000244140625)
# 1 + t = m with m in [sqrt(1/2), sqrt(2)): the offset puts w = m 2^e's binary exponent at that boundary.
SQRT_HALF_BITS = tl.constexpr(0x3F3504F3)
# asinh(x) = x (1 + A3 x^2 + A5 x^4 + A7 x^6 + ...): -1/6, 3/40, -5/112
A3, A5, A7 = tl.constexpr(-0.16666666666666666), tl.constexpr(0.075), tl.constexpr(-0.044642857142857144)


@triton.jit
def _asinh_f32(x):
    """asinh(x) = sign(x) log1p(u), u = a + a^2 / (1 + sqrt(1 + a^2)), a = |x|: the log1p form keeps small |x|
    accurate (asinh(a) = a - a^3/6 ...: no log(1 + tiny) cancellation), and Triton's approximate fp32 '/' and
    sqrt (each within 2 ulp) err only in the a^2 term, relatively small beside a. Above 2^32 (where a^2 would
    overflow) log1p(a) + ln 2; below 2^-12 a itself. log1p(u) = e ln 2 + log1p_reduced(t) with 1 + u = (1 + t)
    2^e taken from the bits of w = 1 + u, and t = u itself where e = 0 (u < sqrt 2 - 1: no rounding of 1 + u);
    beyond, w's rounding costs under 1.7e-7 relative. No branch: inf and NaN are selected through at the end.
    -0 stays -0 (copysign). libdevice's fp32 asinh divides correctly rounded with a slow-path branch (~72 SASS
    instructions an element on sm_90), and its log1p has a branch per element too: fp16/bf16 asinh was 0.82x
    ATen at 64M on an H200."""
    a = tl.abs(x)
    large = a > LARGE
    s = a * a
    u = tl.where(large, a, a + s / (1.0 + tl.sqrt(1.0 + s)))
    bits = (1.0 + u).to(tl.int32, bitcast=True)
    exponent = (bits - SQRT_HALF_BITS) >> 23
    t = (bits - (exponent << 23)).to(tl.float32, bitcast=True) - 1.0
    t = tl.where(exponent == 0, u, t)
    r = exponent.to(tl.float32) * LN2 + log1p_reduced(t) + tl.where(large, LN2, 0.0)
    r = tl.where(a < SMALL, a, r)
    r = tl.where(a < INF, r, a)  # inf, NaN
    return libdevice.copysign(r, x)


@triton.jit
def _asinh_for_16bit(x):
    """asinh(x) in fp32 for a result stored in fp16 or bf16: below |x| = 1/4 its odd series to x^7 (relative error
    under 5e-7), from there log(a + sqrt(a^2 + 1)) (log(2a) past 2^12, where a^2 + 1 rounds to a^2), one
    logarithm and no cancellation. _asinh_f32 took 124-152 us at 64M fp16/bf16 on an H200, this 99-113, ATen
    101-111; within 0.5 ulp over 64M draws, as ATen's."""
    a = tl.abs(x)
    z = x * x
    series = x * (1.0 + z * (A3 + z * (A5 + z * A7)))
    r = tl.log(tl.where(a > 4096.0, a + a, a + tl.sqrt(z + 1.0)))
    r = tl.where(x < 0, 0.0 - r, r)
    return tl.where(a < 0.25, series, r)  # -0 stays -0 (the series), NaN passes


@triton.jit
def _asinh(x, COMMON: tl.constexpr):
    if (COMMON == tl.float16) or (COMMON == tl.bfloat16):
        r = _asinh_for_16bit(x)
    elif x.dtype == tl.float32:
        r = _asinh_f32(x)
    else:
        r = libdevice.asinh(x)
    return r


asinh_op = PointwiseOp("asinh", _asinh, operands=1, promotion=Promotion.INT_TO_FLOAT, common_arg=True)


def _arcsinh_out(x):
    return torch.arcsinh(x, out=torch.empty(0, device=x.device))

SPECS = [
    unary_spec(asinh_op, torch.asinh,
               more=(alias_calls(("arcsinh", torch.arcsinh, "asinh"), ("arcsinh-inplace", torch.arcsinh_, "asinh_"),
                                 ("arcsinh-out", _arcsinh_out, "asinh.out")),)),
]
