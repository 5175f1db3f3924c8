"""fmod (Tensor and Scalar, in-place, out=): C's fmod, x - trunc(x / y) * y computed exactly, with the
sign of x. fp16, fp32 and fp64 are computed by libdevice's fmod, which is exact, save that Triton links libdevice
with FTZ on NVIDIA GPUs: fp32 subnormal operands and results are flushed to zero. fp16 values are fp32 normals;
where an fp32 operand is below 2^-103 (only then can either be subnormal), the block redoes those elements in
fp64. bf16 values can be fp32 subnormals: they take a short exact path, _fmod_narrow, whose block test is cheaper
than libdevice's fmod plus _fmod_f32's. Triton's float ``%`` is no alternative: it lowers to
x - trunc(x / y) * y with a rounded quotient, wrong once |x / y| passes 2^24. Integer division by zero raises
RuntimeError("ZeroDivisionError") on CPU, as ATen's CPU kernel does, and is left undefined elsewhere, as
CUDA's is. remainder.py builds on this kernel."""

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import NUMERIC
from gems.ops.pointwise.div import ZERO_DIVISION_CHECK, check_zero_division
from gems.ops.pointwise.shared import checked_binary_overloads, pointwise_perf
from gems.spec import OpSpec

# Divisors of both signs (integers: small ones, so that the sign rules show; zeros are drawn away).
DIVISOR = {"low": -4.0, "high": 4.0, "int_low": -9, "int_high": 9}
# Perf divisors: no integer zero (ATen's CPU kernel raises for it).
PERF_DIVISOR = {"low": 0.5, "high": 4.0, "int_low": 1, "int_high": 9}

# Below 2^-103 an fp32 operand may be subnormal, or (a multiple of a 2^-126 - 23 ulp smaller than the
# divisor) give a subnormal result: libdevice's FTZ would flush either.
TINY = tl.constexpr(9.860761315262648e-32)
INF = tl.constexpr(float("inf"))
# _fmod_narrow's quotient bound: below 2^20 an fp32 quotient, even approximate (2 ulp), truncates to within
# one of the exact quotient's truncation. Its divisor bounds keep the quotient and the correction normal (and
# the approximate division in its range: it returns 0 for divisors past 2^126).
NARROW_QUOTIENT = tl.constexpr(1048576.0)
NARROW_Y_LOW = tl.constexpr(7.888609052210118e-31)  # 2^-100
NARROW_Y_HIGH = tl.constexpr(1.2676506002282294e30)  # 2^100


@triton.jit
def _fmod_f32(x, y):
    """libdevice's fmod of fp32 values; a block with an operand below 2^-103 (zeros aside) redoes those elements
    in fp64, where every fp32 value is normal: the remainder is exact there, and a multiple of y's ulp, so fp32
    holds it (a subnormal result too). H200, 64M fp32 elements: ATen 191.3 us, libdevice's fmod alone 191, this
    kernel 190; the scaled path it replaces (2^64 scalings and two more fmods inline) 210."""
    r = libdevice.fmod(x, y)
    ax = tl.abs(x)
    ay = tl.abs(y)
    smallest = tl.minimum(tl.where(ax > 0, ax, INF), tl.where(ay > 0, ay, INF))  # NaN: INF, never tiny
    tiny = smallest < TINY
    if tl.max(tl.where(tiny, 1, 0)) > 0:
        r = tl.where(tiny, libdevice.fmod(x.to(tl.float64), y.to(tl.float64)).to(tl.float32), r)
    return r


@triton.jit
def _fmod_narrow(x, y):
    """fmod of bf16 (or fp16) values (x, y: fp32): q = trunc(x / y), at most one off the exact quotient's; then
    x - q * y by one fma is exact, because it is representable: a multiple of the smaller operand's ulp below
    2 |y|, which takes at most 13 bits for 11-bit mantissas; a q one off is corrected by |y| (exact as well).
    A block with an element outside the bounds (|x / y| >= 2^20, y zero, tiny, huge, infinite or NaN, x infinite
    or NaN) computes those elements by libdevice's fmod in fp64: exact, and every fp32 value is an fp64 normal.
    H200, 64M elements, ATen 100 us: bf16 111 us (0.90x) against 152 us with libdevice's fmod and _fmod_f32's
    test; fp16 109 us, against 100 us with libdevice's fmod alone (which fp16 needs: the block-wide test, a
    reduction, costs about as much as the work saved)."""
    ay = tl.abs(y)
    # the hardware's approximate quotient (2 ulp; a flushed subnormal x gives q = 0, and r = x all the same)
    q = libdevice.trunc(libdevice.fast_dividef(x, y))
    # the divisor's bounds as the quotient's (y may be a scalar, whose & with a block the interpreter refuses)
    fast = tl.abs(q) < tl.where((ay > NARROW_Y_LOW) & (ay < NARROW_Y_HIGH), NARROW_QUOTIENT, 0.0)
    r = tl.fma(0 - q, y, x)
    toward_x = tl.where(x < 0, 0 - ay, ay)  # |y| with x's sign
    r = tl.where((r != 0) & ((r < 0) != (x < 0)), r + toward_x, r)  # q was one too large
    r = tl.where(tl.abs(r) >= ay, r - toward_x, r)  # q was one too small
    r = tl.where(r == 0, x * 0.0, r)  # a zero remainder has x's sign
    if tl.min(tl.where(fast, 1, 0)) == 0:
        r = tl.where(fast, r, libdevice.fmod(x.to(tl.float64), y.to(tl.float64)).to(tl.float32))
    return r


@triton.jit
def c_fmod(x, y, STORED: tl.constexpr):
    """x fmod y with the sign of x (Triton's integer ``%`` truncates, like C); STORED: the operator's common
    dtype (PointwiseOp(common_arg=True))."""
    if x.dtype == tl.float32 and STORED == tl.bfloat16:
        r = _fmod_narrow(x, y)
    elif x.dtype == tl.float32 and STORED == tl.float16:
        r = libdevice.fmod(x, y)  # fp16 values are fp32 normals, and so are their remainders: FTZ flushes nothing
    elif x.dtype == tl.float32:
        r = _fmod_f32(x, y)
    elif x.dtype.is_floating():
        r = libdevice.fmod(x, y)
    else:
        r = x % y
    return r


fmod_op = PointwiseOp("fmod", c_fmod, operands=2, dtypes=NUMERIC, common_arg=True)
fmod, fmod_, fmod_out = checked_binary_overloads(fmod_op, check_zero_division)


def modulo_samples(name, call):
    """Samples of fmod and remainder (``name``): the binary variants with divisors of both signs, special
    values with integer zero divisors left out (they have their own variant), quotients past 2^24, the
    scalar overloads, and the out= of a Scalar overload (a CompositeExplicitAutograd wrapper of
    Tensor_out)."""

    def samples(dtype, device, quick):
        from gems.ops.pointwise.div import special_divide
        from gems.testing.samples_edges import integer_extreme_samples
        from gems.testing.samples_extra import alias_samples, binary_op_samples, one_tensor

        ops, inplace_ops, inplace = (getattr(torch.ops.aten, name), getattr(torch.ops.aten, f"{name}_"),
                                     getattr(torch.Tensor, f"{name}_"))
        base = binary_op_samples(
            call, out=f"{name}.Tensor_out", inplace=(f"{name}_.Tensor", inplace), rhs_domain=DIVISOR,
            nonzero_rhs=True, int_specials=False, scalar=-2.5, scalar_overload=(f"{name}.Scalar", ops.Scalar),
            scalar_expects=f"{name}.Scalar", zero_division=(f"{name}.Tensor", call), grad=True)
        extra = [
            ("special-values-nonzero", call, f"{name}.Tensor", special_divide),
            ("inplace-scalar", lambda x: inplace_ops.Scalar(x, 3), f"{name}_.Scalar", one_tensor()),
            ("scalar-out", lambda x: call(x, -3, out=torch.empty_like(x)), f"{name}.Tensor_out", one_tensor()),
            ("huge-quotient", call, f"{name}.Tensor", _huge_quotients),
            ("tiny-operands", call, f"{name}.Tensor", _tiny_operands),
        ]
        if dtype.is_floating_point:
            extra.append(("scalar-zero", lambda x: call(x, 0.0), f"{name}.Scalar", one_tensor()))
        generators = [base, alias_samples(lambda *a: [], extra),
                      integer_extreme_samples(call, operands=2, nonzero_rhs=True, expects=f"{name}.Tensor")]
        return [case for generate in generators for case in generate(dtype, device, quick)]

    return samples


def _huge_quotients(dtype, device, quick):
    """|x / y| far past 2^24 (floats; integers: the dtype's extremes): fmod must stay exact."""
    if dtype.is_floating_point:
        big = torch.finfo(dtype).max / 8
        x = torch.tensor([big, -big, 1e30, -3e38, 12345.678, 1e4], dtype=torch.float64).to(dtype)
        y = torch.tensor([3.0, -7.0, 0.3, 1.1, -1e-3, 0.1], dtype=torch.float64).to(dtype)
    else:
        info = torch.iinfo(dtype)
        x = torch.tensor([info.max, info.min, info.max, info.min + 1], dtype=dtype)
        y = torch.tensor([3, 7, 2, 5] if info.min == 0 else [3, -7, -2, 5], dtype=dtype)
    return (x.to(device), y.to(device)), {}


def _tiny_operands(dtype, device, quick):
    """Operands below 2^-103, where libdevice's FTZ would flush: subnormal x or y, and normal ones whose
    remainder is subnormal (2^-120 (1 + 2^-7) fmod 2^-120 = 2^-127), beside ordinary elements of the block.
    fp16 has no such values (they round to zero: still the ordinary path's zeros)."""
    x = [2.0 ** -120 * (1 + 2.0 ** -7), 2.0 ** -100, 1.0, -(2.0 ** -130), 5.0, 2.0 ** -149, 7.5, -3.25, 0.0, 1e30]
    y = [2.0 ** -120, 3 * 2.0 ** -110, 3 * 2.0 ** -120, 1.0, 2.0 ** -140, 2.0 ** -148, 2.0, -1.5, 2.0 ** -140,
         -(2.0 ** -126)]
    if not dtype.is_floating_point:
        x, y = [7, -9, 5, 3, 100, -4, 8, 1, 0, 2], [2, 4, -3, 7, 9, 3, 5, 1, 6, -1]
    return (torch.tensor(x, dtype=torch.float64).to(dtype).to(device),
            torch.tensor(y, dtype=torch.float64).to(dtype).to(device)), {}


SPECS = [
    OpSpec(
        name="fmod", family="pointwise",
        impls={"fmod.Tensor": fmod, "fmod.Scalar": fmod, "fmod_.Tensor": fmod_, "fmod_.Scalar": fmod_,
               "fmod.Tensor_out": fmod_out},
        call=torch.fmod, samples=modulo_samples("fmod", torch.fmod), dtypes=NUMERIC,
        perf=pointwise_perf(2, domain=PERF_DIVISOR), aten_decisions=ZERO_DIVISION_CHECK,
    ),
]
