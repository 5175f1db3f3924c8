"""fmod (Tensor and Scalar, in-place, out=): C's fmod, x - trunc(x / y) * y computed exactly, with the
sign of x. Floats are computed in fp32 (fp16 and bf16 too) or fp64 by libdevice's fmod, which is exact, save
that Triton links libdevice with FTZ on NVIDIA GPUs: fp32 subnormal operands and results are flushed to zero.
Where an operand is below 2^-103 (only then can either be subnormal), the block redoes those elements in fp64;
fp16 values never are. Triton's float ``%`` is no alternative: it lowers to
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
@triton.jit
def _fmod_f32(x, y, STORED: tl.constexpr):
    """libdevice's fmod; a block with an operand below 2^-103 (zeros aside) redoes those elements in fp64, where
    every fp32 value is normal: the remainder is exact there, and a multiple of y's ulp, so fp32 holds it (a
    subnormal result too). fp16 operands never are tiny (their smallest, 2^-24, is an fp32 normal), so they
    skip the test. H200, 64M elements, us, ATen 99.9 (bf16) / 191.3 (fp32): libdevice's fmod alone 99-100 /
    191, this kernel 152 / 190 (the block's test alone costs bf16 about 30 us), the scaled fp32 path it
    replaces (2^64 scalings and two more fmods inline) 197 / 210."""
    r = libdevice.fmod(x, y)
    if STORED != tl.float16:
        ax = tl.abs(x)
        ay = tl.abs(y)
        smallest = tl.minimum(tl.where(ax > 0, ax, INF), tl.where(ay > 0, ay, INF))  # NaN: INF, never tiny
        tiny = smallest < TINY
        if tl.max(tl.where(tiny, 1, 0)) > 0:
            r = tl.where(tiny, libdevice.fmod(x.to(tl.float64), y.to(tl.float64)).to(tl.float32), r)
    return r


@triton.jit
def c_fmod(x, y, STORED: tl.constexpr):
    """x fmod y with the sign of x (Triton's integer ``%`` truncates, like C); STORED: the operator's common
    dtype (PointwiseOp(common_arg=True))."""
    if x.dtype == tl.float32:
        r = _fmod_f32(x, y, STORED)
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
