"""pow (Tensor_Tensor, Tensor_Scalar, Scalar; in-place, out=).

pow with a scalar exponent takes ATen's special cases (x*x, sqrt, 1/x...), whose results differ from
pow() at infinities and signed zeros; integer pow is by squaring, with ATen's rules for negative
exponents; fp16/bf16 pow is exp2(y log2|x|) in fp32 (see ``_pow_low_precision``).
"""

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import NUMERIC
from gems.ops.pointwise.shared import fdiv, out_of, pointwise_perf
from gems.spec import OpSpec

INF = tl.constexpr(float("inf"))
FLT_MIN = tl.constexpr(1.1754943508222875e-38)  # the smallest normal fp32


@triton.jit
def _ipow(base, exp):
    """Integer power by squaring (ATen's powi), with its rules for negative exponents."""
    zero = base * 0 + exp * 0  # both broadcast to the block, in the common integer type
    b = base + zero
    e = exp + zero
    result = zero + 1
    if e.dtype.is_int_unsigned():
        # No negative exponent; and triton >= 3.7 refuses comparing an unsigned block with a negative number.
        bits = e
    else:
        bits = tl.where(e < 0, 0, e)
    for _ in range(0, 64):
        result = tl.where((bits & 1) != 0, result * b, result)
        b = b * b
        bits = bits >> 1
    if not e.dtype.is_int_unsigned():
        one = zero + 1
        negative = tl.where(base + zero == 1, one,
                            tl.where(base + zero == -1, tl.where((e & 1) != 0, -one, one), zero))
        result = tl.where(e < 0, negative, result)
    return result


@triton.jit
def _pow_low_precision(x, y):
    """x ** y of fp16/bf16 values, computed in fp32 as exp2(y log2|x|), with C's special cases of pow.

    libdevice's powf carries its logarithm in double-float to stay within an ulp of fp32: several
    times this work, and what held fp16/bf16 pow to 0.83x of ATen at 64M elements on an H200. Here
    the error is that of rounding y log2|x| in fp32, |y log2 x| 2^-24 relative, below 1e-5 while the
    result is finite in bf16 (|y log2 x| < 128): far inside fp16/bf16 tolerance.
    """
    x, y = tl.broadcast(x, y)  # one may be a scalar operand
    ax = tl.abs(x)
    tiny = ax < FLT_MIN  # fp32 subnormals (bf16 has them): the fast log2 flushes them, so scale by 2^24
    log2_ax = tl.log2(tl.where(tiny, ax * 16777216.0, ax)) - tl.where(tiny, 24.0, 0.0)
    r = tl.exp2(y * log2_ax)
    y_integer = tl.floor(y) == y
    y_odd = y_integer & (tl.floor(y * 0.5) != y * 0.5)
    sign_bit = x.to(tl.int32, bitcast=True) < 0  # -0.0 too: pow(-0.0, -1) is -inf
    r = tl.where(sign_bit & y_odd, r * -1.0, r)  # not -r: Triton's -r is 0 - r, +0.0 for r = 0
    r = tl.where((x < 0) & (x > -INF) & ~y_integer, INF - INF, r)  # NaN (a NaN global breaks the JIT)
    return tl.where((y == 0) | (x == 1) | ((ax == 1) & (tl.abs(y) == INF)), 1.0, r)


@triton.jit
def _pow(x, y, COMMON: tl.constexpr):
    if COMMON == tl.float16 or COMMON == tl.bfloat16:
        r = _pow_low_precision(x, y)
    elif x.dtype.is_floating():
        r = libdevice.pow(x, y)
    else:
        r = _ipow(x, y)
    return r


@triton.jit
def _sqrt(x):
    if x.dtype == tl.float32:
        r = tl.sqrt_rn(x)  # tl.sqrt is approximate for fp32 on the GPU
    else:
        r = tl.sqrt(x)
    return r


# ATen's pow(Tensor, Scalar) special cases; each takes the exponent only for type promotion.
@triton.jit
def _pow_zero(x, y):
    return tl.full(x.shape, 1, x.dtype)  # ATen fills ones: pow(nan, 0) is 1, and bool is allowed


@triton.jit
def _pow_one(x, y):
    return x


@triton.jit
def _pow_square(x, y):
    return x * x


@triton.jit
def _pow_cube(x, y):
    return x * x * x


@triton.jit
def _pow_sqrt(x, y):
    return _sqrt(x)


@triton.jit
def _pow_rsqrt(x, y):
    return fdiv(tl.full(x.shape, 1.0, x.dtype), _sqrt(x))


@triton.jit
def _pow_reciprocal(x, y):
    return fdiv(tl.full(x.shape, 1.0, x.dtype), x)


@triton.jit
def _pow_inverse_square(x, y):
    return fdiv(tl.full(x.shape, 1.0, x.dtype), x * x)


# --------------------------------------------------------------------------- operators

pow_op = PointwiseOp("pow", _pow, operands=2, dtypes=NUMERIC, common_arg=True)
# ATen's pow(Tensor, Scalar) fills ones for an exponent of 0 and copies for 1, for every dtype (bool too).
_POW_TRIVIAL = {0: PointwiseOp("pow_zero", _pow_zero, operands=2), 1: PointwiseOp("pow_one", _pow_one, operands=2)}
_POW_SPECIAL = {  # exponent -> op, for floating results (ATen's pow_tensor_scalar_kernel)
    2: PointwiseOp("pow_square", _pow_square, operands=2),
    3: PointwiseOp("pow_cube", _pow_cube, operands=2),
    0.5: PointwiseOp("pow_sqrt", _pow_sqrt, operands=2),
    -0.5: PointwiseOp("pow_rsqrt", _pow_rsqrt, operands=2),
    -1: PointwiseOp("pow_reciprocal", _pow_reciprocal, operands=2),
    -2: PointwiseOp("pow_inverse_square", _pow_inverse_square, operands=2),
}


def _pow_scalar_op(self, exponent):
    """The op for pow(Tensor, Scalar): ATen's special cases where the result is floating."""
    if type(exponent) in (int, float, bool) and exponent in (0, 1):
        return _POW_TRIVIAL[int(exponent)]
    dtype = torch.result_type(self, exponent)
    if not (dtype.is_floating_point or dtype.is_complex):
        if type(exponent) is int and exponent < 0 and not self.dtype.is_floating_point:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        return pow_op
    if type(exponent) in (int, float):
        return _POW_SPECIAL.get(exponent, pow_op)
    return pow_op


def pow_tensor_scalar(self, exponent):
    return _pow_scalar_op(self, exponent)(self, exponent)


def pow_tensor_scalar_(self, exponent):
    return _pow_scalar_op(self, exponent)(self, exponent, out=self, inplace=True)


def pow_tensor_scalar_out(self, exponent, *, out):
    return _pow_scalar_op(self, exponent)(self, exponent, out=out)


def pow_(self, exponent):
    return pow_op(self, exponent, out=self, inplace=True)


# --------------------------------------------------------------------------- samples

_EXPONENT = {"low": -3.0, "high": 3.0, "int_low": -2, "int_high": 6}


def _samples(dtype, device, quick):
    from gems.spec import Sample
    from gems.testing.samples import make_tensor, shape_for
    from gems.testing.samples_extra import binary_op_samples, specials_pair

    base = binary_op_samples(
        torch.pow, out="pow.Tensor_Tensor_out", inplace=("pow_.Tensor", lambda x, y: x.pow_(y)), grad=True,
        domain={"low": 0.25, "high": 4.0}, rhs_domain=_EXPONENT, scalar_expects="pow.Tensor_Scalar")
    shape = shape_for(quick)
    x = lambda: make_tensor(shape, dtype, device)
    exponents = lambda: make_tensor(shape, dtype, device, **_EXPONENT)
    empty = lambda: torch.empty(0, dtype=dtype, device=device)
    cases = base(dtype, device, quick)
    for exponent in (2, 3, 0.5, -0.5, -1, -2, 0, 1, 2.5, -1.5):
        if not dtype.is_floating_point and (isinstance(exponent, float) or exponent < 0):
            continue
        cases.append(Sample(f"exponent-{exponent}", lambda e=exponent: (x(), e), expects="pow.Tensor_Scalar"))
        cases.append(Sample(f"exponent-{exponent}-specials", lambda e=exponent: (specials_pair(dtype, device)[0], e),
                            expects="pow.Tensor_Scalar"))
    if not dtype.is_floating_point:
        cases.append(Sample("negative-int-exponent-error", lambda: (x(), -2)))
        cases.append(Sample("exponent-float-on-int", lambda: (x(), 0.5), expects="pow.Tensor_Scalar"))
    cases += [
        Sample("scalar-base", lambda: (2.5 if dtype.is_floating_point else 2, exponents()), expects="pow.Scalar"),
        Sample("scalar-float-base", lambda: (1.5, exponents()), expects="pow.Scalar"),
        Sample("scalar-base-out", lambda: (2, exponents(), empty()),
               expects="pow.Scalar_out", call=lambda s, e, o: torch.pow(s, e, out=o)),
        Sample("tensor-scalar-out", lambda: (x(), 2, empty()),
               expects="pow.Tensor_Scalar_out", call=lambda a, e, o: torch.pow(a, e, out=o)),
        Sample("inplace-scalar", lambda: (x(), 3), expects="pow_.Scalar", call=lambda a, e: a.pow_(e)),
        Sample("inplace-scalar-sqrt", lambda: (x(), 0.5), expects="pow_.Scalar", call=lambda a, e: a.pow_(e)),
    ]
    if dtype.is_floating_point:
        cases.append(Sample("negative-base-fraction", lambda: (-x().abs(), exponents())))
    else:
        cases.append(Sample("inplace-scalar-float-error", lambda: (x(), 0.5), call=lambda a, e: a.pow_(e)))
    return cases


SPECS = [
    OpSpec(
        name="pow", family="pointwise",
        impls={"pow.Tensor_Tensor": pow_op, "pow.Tensor_Scalar": pow_tensor_scalar, "pow.Scalar": pow_op,
               "pow_.Tensor": pow_, "pow_.Scalar": pow_tensor_scalar_,
               "pow.Tensor_Tensor_out": out_of(pow_op), "pow.Tensor_Scalar_out": pow_tensor_scalar_out,
               "pow.Scalar_out": out_of(pow_op)},
        call=torch.pow, samples=_samples, dtypes=NUMERIC, perf=pointwise_perf(2, domain={"low": 0.5, "high": 2}),
        known_failures={("interpreter", "float16", "exponent-0.5-specials"):
                        "ATen's CPU fp16 pow(-0.0, 0.5) is +0.0 (its bf16/fp32/fp64 give sqrt's -0.0, as gems does)"},
    ),
]
