"""atan2 (in-place, out=): the angle of the point (y=self, x=other); fp32 (and fp16/bf16, computed in fp32)
by octant reduction to atan.py's polynomial (_atan2_f32), fp64 libdevice's atan2. Integers and bool are
computed and returned as the default float dtype. ``arctan2`` is a CompositeImplicitAutograd alias that
ATen decomposes to atan2 before the backend key: gems serves it through atan2's overloads (see the
samples)."""

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp, Promotion
from gems.dtypes import ALL
from gems.ops.pointwise.atan import _atan_poly
from gems.ops.pointwise.shared import binary_samples, inplace_of, out_of, pointwise_perf
from gems.spec import OpSpec

PI = tl.constexpr(3.141592653589793)
PI_2 = tl.constexpr(1.5707963267948966)
PI_4 = tl.constexpr(0.7853981633974483)


@triton.jit
def _atan2_f32(y, x):
    """atan2(y, x) = +-(pi - ) (pi/2 - ) atan(min(|x|, |y|) / max(|x|, |y|)): the ratio in [0, 1] by Triton's
    approximate fp32 '/' (2 ulp, full range: no subnormal flush), its atan by atan.py's polynomial (1e-7),
    then the octant: pi/2 - r where |y| > |x|, pi - r where x has its sign bit set (-0 included), the sign
    of y last. Equal magnitudes take pi/4 (inf/inf is NaN) or 0 for two zeros (0/0), so atan2(+-0, +-0) and
    atan2(+-inf, +-inf) give C's +-0, +-pi, +-pi/4, +-3pi/4; a NaN operand reaches the ratio (the selects
    below are not max/min, which drop NaN). libdevice's atan2 divides correctly rounded with a slow-path
    branch and runs a longer rational form (~95 SASS instructions an element on sm_90): fp16/bf16 atan2 was
    0.84x ATen at 64M on an H200."""
    ay = tl.abs(y)
    ax = tl.abs(x)
    steep = ay > ax
    big = tl.where(steep, ay, ax)
    small = tl.where(steep, ax, ay)
    r = _atan_poly(small / big)
    r = tl.where(ax == ay, tl.where(ax == 0.0, 0.0, PI_4), r)
    r = tl.where(steep, PI_2 - r, r)
    r = tl.where(libdevice.copysign(1.0, x) < 0.0, PI - r, r)
    return libdevice.copysign(r, y)


@triton.jit
def _atan2(y, x):
    if y.dtype == tl.float32:
        r = _atan2_f32(y, x)
    else:
        r = libdevice.atan2(y, x)
    return r


atan2_op = PointwiseOp("atan2", _atan2, operands=2, promotion=Promotion.INT_TO_FLOAT)


def _samples(dtype, device, quick):
    from gems.testing.samples_extra import alias_samples, two_tensors

    wide = lambda x: torch.empty(0, dtype=torch.float64, device=x.device)
    return alias_samples(binary_samples(torch.atan2, out="atan2.out", inplace=("atan2_", torch.Tensor.atan2_),
                                        grad=True, scalar=None, float_scalar=False, result="float"), [
        ("arctan2", torch.arctan2, "atan2", two_tensors()),
        ("arctan2-inplace", lambda x, y: x.double().arctan2_(y), "atan2_", two_tensors()),
        ("arctan2-out", lambda x, y: torch.arctan2(x, y, out=wide(x)), "atan2.out", two_tensors()),
    ])(dtype, device, quick)


SPECS = [
    OpSpec(
        name="atan2", family="pointwise",
        impls={"atan2": atan2_op, "atan2_": inplace_of(atan2_op), "atan2.out": out_of(atan2_op)},
        call=torch.atan2, samples=_samples, dtypes=ALL, perf=pointwise_perf(2),
    ),
]
