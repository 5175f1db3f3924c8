"""digamma: psi(x) = d/dx log Gamma(x), with ATen's special values: psi(+-0) = -+inf, NaN at the negative
integers and -inf, +inf at +inf. Integers and bool give the default float dtype; fp16/bf16 are computed
in fp32. Its derivative calls polygamma (ATen's).

    x < 0:       psi(x) = psi(1 - x) - pi cos(pi r) / sin(pi r), r = x - rint(x) in [-1/2, 1/2] (exact, and
                 cot(pi x) has period 1: near an integer sinpi sees the small r itself, where tan(pi x) would
                 round pi x first; libdevice's fp64 sinpi of r near -1 was 9% off on an H200)
    y < 10:      psi(y) = psi(y + 10) - sum_k<10 1 / (y + k) (fp32: 4 for 10 here and below), the sum kept
                 as one fraction p / q (one division instead of ten; every factor is at least y, so q only
                 underflows for subnormal y, which the next case takes)
    |x| < 2^-30: psi(x) = -1/x - euler_gamma (the next term, pi^2 x / 6, is below fp64's rounding there)
    y >= 10:     psi(y) = log y - 1 / (2y) - sum_n B_2n / (2n y^2n), seven terms (the eighth is below
                 1e-16 relative at y = 10, 1e-10 at y = 4)
"""

from dataclasses import replace

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp, Promotion
from gems.ops.pointwise.shared import log_positive_f32
from gems.ops.pointwise.unary_shared import alias_calls, unary_spec, value_samples

PI = tl.constexpr(3.141592653589793)
EULER_GAMMA = tl.constexpr(0.5772156649015329)
INF = tl.constexpr(float("inf"))
TINY = tl.constexpr(2.0**-30)
ASYMPTOTIC_FROM = tl.constexpr(10)  # ATen's threshold (fp64); the recurrence steps up to it (10 steps)
# fp32: from y = 4 the series' eighth term is 1e-10 (below fp32's rounding), and four steps round less than ten.
ASYMPTOTIC_FROM_F32 = tl.constexpr(4)


@triton.jit
def _asymptotic_tail(z):
    """sum_n B_2n / (2n y^2n) for z = 1 / y^2: 1/12 z - 1/120 z^2 + 1/252 z^3 - ... (Bernoulli numbers)."""
    return z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240 - z * (
        1.0 / 132 - z * (691.0 / 32760 - z * (1.0 / 12)))))))


@triton.jit
def _shift_up(y, FROM: tl.constexpr):
    """(y + FROM, sum_k<FROM 1 / (y + k)) where y < FROM, else (y, 0): FROM unconditional steps of the
    recurrence, the sum kept as one fraction p / q (q at most (2 FROM - 1)! / (FROM - 1)!)."""
    below = y < FROM
    ys = tl.where(below, y, 0.0)
    p = tl.full(y.shape, 0.0, y.dtype)
    q = tl.full(y.shape, 1.0, y.dtype)
    for _ in tl.static_range(FROM):
        p = p * ys + q
        q = q * ys
        ys = ys + 1.0
    return tl.where(below, ys, y), tl.where(below, p / q, 0.0)


@triton.jit
def _digamma(x):
    """The cases above. '/' is Triton's: div.rn.f64 for fp64, the approximate div.full.f32 (2 ulp) for fp32,
    whose errors stay relative to each term (psi's absolute error near its zeros stays below 1e-6 in fp32).
    fp32 takes log y from log_positive_f32 (no branch per element). The reflection (cospi, sinpi, a division)
    runs only in blocks holding a negative x, and the recurrence (_shift_up) takes unconditional steps, four
    in fp32 (asymptotic from 4), ten in fp64; with the reflection for every element and correctly rounded
    fp32 divisions digamma was 0.73-0.84x ATen at 64M on an H200."""
    negative = x < 0
    y = tl.where(negative, 1.0 - x, x)
    if x.dtype == tl.float32:
        y, correction = _shift_up(y, ASYMPTOTIC_FROM_F32)
        log_y = tl.where(y < INF, log_positive_f32(y), y)  # y >= 4: normal; inf, NaN selected through
    else:
        y, correction = _shift_up(y, ASYMPTOTIC_FROM)
        log_y = libdevice.log(y)
    inverse = 1.0 / y
    psi = log_y - 0.5 * inverse - _asymptotic_tail(inverse * inverse) - correction
    if tl.max(tl.where(negative, 1, 0)) > 0:
        r = x - libdevice.rint(x)
        reflection = libdevice.cospi(r) / libdevice.sinpi(r) * (-PI)
        psi = tl.where(negative, psi + reflection, psi)
        psi = tl.where(negative & (x == libdevice.trunc(x)), INF - INF, psi)  # NaN (a NaN global breaks the JIT)
    return tl.where(tl.abs(x) < TINY, -1.0 / x - EULER_GAMMA, psi)


digamma_op = PointwiseOp("digamma", _digamma, operands=1, promotion=Promotion.INT_TO_FLOAT)

SPECS = [replace(
    unary_spec(digamma_op, torch.digamma,
               more=(value_samples([0.0, -0.0, -1.0, -2.0, -2.5, ("ulp-above", -3.0), 1e-30, -1e-30, 10.0,
                                    ("ulp-below", 10.0), 1.4616321449683622, 1e20, -1e5 + 0.5]),
                     alias_calls(("special_digamma", torch.special.digamma, "digamma"),
                                 ("special_psi", torch.special.psi, "digamma")))),
    known_failures={("*", "float64", "domain-edges"):
                    "the oracle is wrong here, not gems: at -3 + 2^-51 ATen's float64 digamma (the oracle) computes "
                    "pi / tan(pi r), which rounds pi r first, and returns -2.1596e15; the value is -2.2518e15, which "
                    "gems returns"}),
]
