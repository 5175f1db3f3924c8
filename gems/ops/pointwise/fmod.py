"""fmod (Tensor and Scalar, in-place, out=): C's fmod, x - trunc(x / y) * y computed exactly, with the
sign of x. Floats take a short exact path for quotients below 2^20 (_fmod_f32) and libdevice's fmod beyond
it: Triton's float ``%`` lowers on NVIDIA GPUs to x - trunc(x / y) * y with a rounded quotient, wrong once
|x / y| passes 2^24 (under the interpreter, libdevice's fmod is torch's CPU fmod, which is as inexact there
as ATen's CPU kernel). Integer division by zero raises RuntimeError("ZeroDivisionError") on CPU, as ATen's
CPU kernel does, and is left undefined elsewhere, as CUDA's is. remainder.py builds on this kernel."""

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


FP32_SMALLEST_NORMAL = tl.constexpr(1.1754943508222875e-38)
# 2^64 and 2^-64: scale an fp32 subnormal divisor to a normal number and back, exactly.
SUBNORMAL_SCALE = tl.constexpr(18446744073709551616.0)
SUBNORMAL_UNSCALE = tl.constexpr(5.421010862427522e-20)
FP32_LARGEST = tl.constexpr(3.4028234663852886e38)
# Below 2^20 an approximate quotient (2 ulp) is less than 1/8 from the exact one: its floor is one off at most.
SHORT_QUOTIENT_LIMIT = tl.constexpr(1048576.0)


@triton.jit
def _fmod_f32_exact(x, y):
    """libdevice's fmod without its flush of subnormal operands (Triton links libdevice with FTZ on NVIDIA
    GPUs): |x| < |y| is x itself; a subnormal y first reduces x by y * 2^64, a multiple of y (exact), then
    the remainder and y are both scaled by 2^64 and the result scaled back."""
    ay = tl.abs(y)
    tiny = ay < FP32_SMALLEST_NORMAL
    big_y = y * SUBNORMAL_SCALE
    reduced = tl.where(tl.abs(x) < ay * SUBNORMAL_SCALE, x, libdevice.fmod(x, big_y))
    scaled = libdevice.fmod(reduced * SUBNORMAL_SCALE, big_y) * SUBNORMAL_UNSCALE
    plain = tl.where(tl.abs(x) < ay, x, libdevice.fmod(x, y))
    return tl.where(tiny, scaled, plain)


@triton.jit
def _fmod_f32(x, y):
    """Quotients |x / y| < 2^20 with a finite normal y (what most calls see) take a short exact path: Triton's
    approximate fp32 '/' (within 2 ulp) truncates to the integer quotient q or one off, which the sign or size
    of fma(-q, |y|, |x|) reveals; with the right q that fma is exact (the remainder is representable). A block
    with other elements (huge quotients, subnormal, zero or non-finite operands) also runs _fmod_f32_exact; one
    without skips it. The exact function alone, three libdevice fmod calls an element, made fp16/bf16 fmod
    0.30x ATen at 64M on an H200."""
    ax = tl.abs(x)
    ay = tl.abs(y)
    # A zero limit where |y| is subnormal, zero, infinite or NaN; one where-select, not an & of a y-shaped mask
    # with an x-shaped one (the interpreter splats a scalar bool into a float array, which & then rejects).
    limit = tl.where((ay >= FP32_SMALLEST_NORMAL) & (ay <= FP32_LARGEST), ay * SHORT_QUOTIENT_LIMIT, 0.0)
    fast = ax < limit
    q = tl.floor(ax / ay)
    r = tl.fma(0 - q, ay, ax)
    q = tl.where(r < 0, q - 1.0, tl.where(r >= ay, q + 1.0, q))
    r = libdevice.copysign(tl.fma(0 - q, ay, ax), x)
    if tl.max(tl.where(fast, 0, 1)) > 0:
        r = tl.where(fast, r, _fmod_f32_exact(x, y))
    return r


@triton.jit
def c_fmod(x, y):
    """x fmod y: the sign of x (Triton's integer ``%`` truncates, like C)."""
    if x.dtype == tl.float32:
        r = _fmod_f32(x, y)
    elif x.dtype.is_floating():
        r = libdevice.fmod(x, y)
    else:
        r = x % y
    return r


fmod_op = PointwiseOp("fmod", c_fmod, operands=2, dtypes=NUMERIC)
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


SPECS = [
    OpSpec(
        name="fmod", family="pointwise",
        impls={"fmod.Tensor": fmod, "fmod.Scalar": fmod, "fmod_.Tensor": fmod_, "fmod_.Scalar": fmod_,
               "fmod.Tensor_out": fmod_out},
        call=torch.fmod, samples=modulo_samples("fmod", torch.fmod), dtypes=NUMERIC,
        perf=pointwise_perf(2, domain=PERF_DIVISOR), aten_decisions=ZERO_DIVISION_CHECK,
    ),
]
