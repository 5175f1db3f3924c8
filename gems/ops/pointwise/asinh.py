"""asinh: inverse hyperbolic sine; fp32 (and fp16/bf16, computed in fp32) through log1p (_asinh_f32), fp64
libdevice's asinh.
Integer and bool inputs arrive converted to the default float dtype (Promotion.INT_TO_FLOAT), as in ATen;
fp16/bf16 are computed in fp32.
arcsinh, a CompositeImplicitAutograd alias, runs this operator's overloads.
"""

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp, Promotion
from gems.ops.pointwise.unary_shared import alias_calls, unary_spec


LN2 = tl.constexpr(0.6931471805599453)
# Above 2^32, sqrt(1 + a^2) = a within 2^-65 relative: asinh(a) = log(2a) = log1p(a) + ln 2 within 2^-32.
LARGE = tl.constexpr(4294967296.0)
# Below 2^-12, asinh(a) = a (the next term, a^3 / 6, is under 2^-26 relative): exact for subnormals, which
# libdevice's log1p (linked with FTZ on NVIDIA GPUs) would flush.
SMALL = tl.constexpr(0.000244140625)


@triton.jit
def _asinh_f32(x):
    """asinh(x) = sign(x) log1p(a + a^2 / (1 + sqrt(1 + a^2))), a = |x|: the log1p form keeps small |x|
    accurate (asinh(a) = a - a^3/6 ...: no log(1 + tiny) cancellation), and Triton's approximate fp32 '/' and
    sqrt (each within 2 ulp) err only in the a^2 term, relatively small beside a. Above 2^32 (where a^2 would
    overflow) log1p(a) + ln 2; below 2^-12 a itself. -0 stays -0 (copysign), NaN and inf pass. libdevice's
    fp32 asinh divides correctly rounded with a slow-path branch (~72 SASS instructions an element on sm_90,
    this ~55): fp16/bf16 asinh was 0.82x ATen at 64M on an H200."""
    a = tl.abs(x)
    large = a > LARGE
    s = a * a
    u = tl.where(large, a, a + s / (1.0 + tl.sqrt(1.0 + s)))
    r = libdevice.log1p(u) + tl.where(large, LN2, 0.0)
    r = tl.where(a < SMALL, a, r)
    return libdevice.copysign(r, x)


@triton.jit
def _asinh(x):
    if x.dtype == tl.float32:
        r = _asinh_f32(x)
    else:
        r = libdevice.asinh(x)
    return r


asinh_op = PointwiseOp("asinh", _asinh, operands=1, promotion=Promotion.INT_TO_FLOAT)


def _arcsinh_out(x):
    return torch.arcsinh(x, out=torch.empty(0, device=x.device))

SPECS = [
    unary_spec(asinh_op, torch.asinh,
               more=(alias_calls(("arcsinh", torch.arcsinh, "asinh"), ("arcsinh-inplace", torch.arcsinh_, "asinh_"),
                                 ("arcsinh-out", _arcsinh_out, "asinh.out")),)),
]
