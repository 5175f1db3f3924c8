"""atan: arc tangent; fp32 by a polynomial (_atan_f32), fp16/bf16 (computed in fp32) by a shorter one
(_atan_for_16bit), fp64 libdevice's atan.
Integer and bool inputs arrive converted to the default float dtype (Promotion.INT_TO_FLOAT), as in ATen;
fp16/bf16 are computed in fp32.
arctan, a CompositeImplicitAutograd alias, runs this operator's overloads.
"""

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp, Promotion
from gems.ops.pointwise.unary_shared import alias_calls, unary_spec

PI_2 = tl.constexpr(1.5707963267948966)
# atan(t) = t + t^3 P(t^2) on [0, 1]: P fitted (relative error of atan below 1e-7 evaluated in fp32, about 1.6
# half-ulps; fp32 tolerance 1.3e-6).
P0, P1, P2, P3 = (tl.constexpr(-0.3333315849304199), tl.constexpr(0.1999383270740509),
                  tl.constexpr(-0.14211221039295197), tl.constexpr(0.10665733367204666))
P4, P5, P6, P7 = (tl.constexpr(-0.07550127059221268), tl.constexpr(0.043173257261514664),
                  tl.constexpr(-0.016337305307388306), tl.constexpr(0.0029116354417055845))

# A shorter fit for 16-bit results: atan(t) = t Q(t^2) on [0, 1].
Q0, Q1, Q2 = tl.constexpr(0.99997726), tl.constexpr(-0.33262347), tl.constexpr(0.19354346)
Q3, Q4, Q5 = tl.constexpr(-0.11643287), tl.constexpr(0.05265332), tl.constexpr(-0.01172120)


@triton.jit
def _atan_poly(t):
    """atan(t) for t in [0, 1] (fp32); atan2.py reduces to it too."""
    z = t * t
    p = ((((((P7 * z + P6) * z + P5) * z + P4) * z + P3) * z + P2) * z + P1) * z + P0
    return t + (t * z) * p


@triton.jit
def _atan_f32(x):
    """|x| > 1 through atan(x) = pi/2 - atan(1/x) with Triton's approximate fp32 reciprocal (2 ulp), then the
    polynomial; the sign of x put back (-0 stays -0, NaN passes). libdevice's fp32 atan computes a rational
    approximation through two correctly rounded reciprocals, each with a slow-path branch (~50 SASS
    instructions an element on sm_90, about twice this): fp16/bf16 atan was compute-bound, 0.81x ATen at 64M on
    an H200."""
    ax = tl.abs(x)
    big = ax > 1.0
    t = tl.where(big, 1.0 / ax, ax)
    r = _atan_poly(t)
    r = tl.where(big, PI_2 - r, r)
    return libdevice.copysign(r, x)


@triton.jit
def _atan_for_16bit(x):
    """atan(x) in fp32 for a result stored in fp16 or bf16: the same reduction with a shorter odd polynomial
    on [0, 1] (absolute error near 1e-5, a fiftieth of an fp16 half-ulp; results within 0.5 ulp over 64M draws
    on an H200, as ATen's). _atan_f32 took 90 us at 64M bf16 on an H200, this 72, ATen 76."""
    ax = tl.abs(x)
    big = ax > 1.0
    t = tl.where(big, 1.0 / ax, ax)
    z = t * t
    r = t * (Q0 + z * (Q1 + z * (Q2 + z * (Q3 + z * (Q4 + z * Q5)))))
    r = tl.where(big, PI_2 - r, r)
    return tl.where(ax == 0, x, tl.where(x < 0, 0.0 - r, r))  # -0 stays -0, NaN passes


@triton.jit
def _atan(x, COMMON: tl.constexpr):
    if (COMMON == tl.float16) or (COMMON == tl.bfloat16):
        r = _atan_for_16bit(x)
    elif x.dtype == tl.float32:
        r = _atan_f32(x)
    else:
        r = libdevice.atan(x)
    return r


atan_op = PointwiseOp("atan", _atan, operands=1, promotion=Promotion.INT_TO_FLOAT, common_arg=True)

SPECS = [
    unary_spec(atan_op, torch.atan,
               more=(alias_calls(("arctan", torch.arctan, "atan")),)),
]
