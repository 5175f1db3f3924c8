"""Arithmetic: add, sub, mul, div (true, trunc, floor), floor_divide, pow, maximum, minimum, clamp.

Every operator is a :class:`PointwiseOp` over a scalar Triton body, so broadcasting, strides,
scalar operands, type promotion, out= and in-place come from the code generator. What is left
here is ATen's per-operator semantics:

- true division promotes integers to float (Promotion.INT_TO_FLOAT) and divides with IEEE
  rounding (Triton's fp32 ``/`` is an approximation on the GPU; ``tl.div_rn`` is exact);
- trunc / floor division follow ATen's c10::div_floor_floating and div_floor_integer; integer
  division by zero raises RuntimeError("ZeroDivisionError") on CPU, as ATen's CPU kernels do,
  and is left undefined elsewhere, as CUDA's are;
- pow with a scalar exponent takes ATen's special cases (x*x, sqrt, 1/x...), whose results differ
  from pow() at infinities and signed zeros; integer pow is by squaring, with ATen's rules for
  negative exponents; fp16/bf16 pow is exp2(y log2|x|) in fp32 (see ``_pow_low_precision``);
- maximum, minimum and clamp propagate NaN from any operand.
"""

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp, Promotion, compute_dtype
from gems.ops.creation import checked_scalar
from gems.spec import OpSpec, Sample
from gems.testing.perf_inputs import pointwise_perf
from gems.testing.samples import make_tensor, shape_for
from gems.testing.samples_extra import (
    alias_samples,
    binary_op_samples,
    nonzero_divisor,
    scalars_perf,
    specials_pair,
    tensor_and_scalar,
    two_tensors,
)

FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
INTS = (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8)
NUMERIC = FLOATS + INTS
NUMERIC_AND_BOOL = NUMERIC + (torch.bool,)
# Divisors and exponents away from zero keep random float samples meaningful (no 1/tiny).
_DIVISOR = {"low": 0.5, "high": 4.0}


# --------------------------------------------------------------------------- scalar bodies


@triton.jit
def _fdiv(x, y):
    """x / y with IEEE rounding: Triton's fp32 '/' is approximate on the GPU."""
    if x.dtype == tl.float32:
        q = tl.div_rn(x, y)
    else:
        q = x / y
    return q


@triton.jit
def _add(x, y, alpha):
    if x.dtype == tl.int1:
        # bool + bool is logical or in ATen (integer 1 + 1 would wrap to 0 in one bit)
        r = (x.to(tl.int32) + y.to(tl.int32) * alpha) != 0
    else:
        r = x + y * alpha
    return r


@triton.jit
def _sub(x, y, alpha):
    return x - y * alpha


@triton.jit
def _mul(x, y):
    return x * y


@triton.jit
def _true_div(x, y):
    return _fdiv(x, y)


@triton.jit
def _trunc_div(x, y):
    if x.dtype.is_floating():
        q = _fdiv(x, y)
        r = tl.where(q < 0, tl.ceil(q), tl.floor(q))
    else:
        r = x // y  # Triton's integer division truncates, like C
    return r


@triton.jit
def _floor_div(x, y):
    if x.dtype.is_floating():
        # c10::div_floor_floating: floor((a - fmod(a, b)) / b), corrected towards the nearest integer
        mod = x % y  # C fmod for floats
        div = _fdiv(x - mod, y)
        div = tl.where((mod != 0) & ((y < 0) != (mod < 0)), div - 1.0, div)
        floordiv = tl.floor(div)
        floordiv = tl.where(div - floordiv > 0.5, floordiv + 1.0, floordiv)
        q = _fdiv(x, y)
        zero = libdevice.copysign(tl.full(q.shape, 0.0, q.dtype), q)
        floordiv = tl.where(div != 0, floordiv, zero)
        r = tl.where(y == 0, q, floordiv)
    else:
        # c10::div_floor_integer: truncate, then step down where the signs differ and a remainder is left
        q = x // y
        rem = x % y
        r = tl.where((rem != 0) & ((rem < 0) != (y < 0)), q - 1, q)
    return r


@triton.jit
def _ipow(base, exp):
    """Integer power by squaring (ATen's powi), with its rules for negative exponents."""
    zero = base * 0 + exp * 0  # both broadcast to the block, in the common integer type
    b = base + zero
    e = exp + zero
    result = zero + 1
    bits = tl.where(e < 0, 0, e)
    for _ in range(0, 64):
        result = tl.where((bits & 1) != 0, result * b, result)
        b = b * b
        bits = bits >> 1
    one = zero + 1
    negative = tl.where(base + zero == 1, one, tl.where(base + zero == -1, tl.where((e & 1) != 0, -one, one), zero))
    return tl.where(e < 0, negative, result)


INF = tl.constexpr(float("inf"))
FLT_MIN = tl.constexpr(1.1754943508222875e-38)  # the smallest normal fp32


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
    return _fdiv(tl.full(x.shape, 1.0, x.dtype), _sqrt(x))


@triton.jit
def _pow_reciprocal(x, y):
    return _fdiv(tl.full(x.shape, 1.0, x.dtype), x)


@triton.jit
def _pow_inverse_square(x, y):
    return _fdiv(tl.full(x.shape, 1.0, x.dtype), x * x)


@triton.jit
def _max_nan(x, y):
    if x.dtype == tl.int1:
        r = x | y
    else:
        r = tl.where((x > y) | (x != x), x, y)  # NaN in either operand wins
    return r


@triton.jit
def _min_nan(x, y):
    if x.dtype == tl.int1:
        r = x & y
    else:
        r = tl.where((x < y) | (x != x), x, y)
    return r


@triton.jit
def _clamp(x, lo, hi):
    return _min_nan(_max_nan(x, lo), hi)


# --------------------------------------------------------------------------- operators

_NO_BOOL = NUMERIC  # ATen defines these kernels for every numeric dtype but bool

add_op = PointwiseOp("add", _add, operands=2, scalars=("alpha",))
sub_op = PointwiseOp("sub", _sub, operands=2, scalars=("alpha",))
# ATen's mul and div use a scalar operand at compute precision, without rounding it to fp16 first.
mul_op = PointwiseOp("mul", _mul, operands=2, round_scalars=False)
true_div_op = PointwiseOp("div", _true_div, operands=2, promotion=Promotion.INT_TO_FLOAT, round_scalars=False)
trunc_div_op = PointwiseOp("div_trunc", _trunc_div, operands=2, dtypes=_NO_BOOL, round_scalars=False)
floor_div_op = PointwiseOp("div_floor", _floor_div, operands=2, dtypes=_NO_BOOL, round_scalars=False)
pow_op = PointwiseOp("pow", _pow, operands=2, dtypes=_NO_BOOL, common_arg=True)
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
maximum_op = PointwiseOp("maximum", _max_nan, operands=2)
minimum_op = PointwiseOp("minimum", _min_nan, operands=2)
clamp_op = PointwiseOp("clamp", _clamp, operands=3, dtypes=_NO_BOOL)
clamp_min_op = PointwiseOp("clamp_min", _max_nan, operands=2, dtypes=_NO_BOOL)
clamp_max_op = PointwiseOp("clamp_max", _min_nan, operands=2, dtypes=_NO_BOOL)


# --------------------------------------------------------------------------- ATen overloads


def _is_bool(value) -> bool:
    return value.dtype is torch.bool if isinstance(value, torch.Tensor) else isinstance(value, bool)


def _check_alpha(self, other, alpha):
    """ATen refuses an alpha its result type cannot hold."""
    if alpha == 1 and type(alpha) is int:
        return
    dtype = torch.result_type(self, other)
    if isinstance(alpha, bool) and dtype != torch.bool:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if isinstance(alpha, float) and not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")


def add(self, other, *, alpha=1):
    _check_alpha(self, other, alpha)
    return add_op(self, other, alpha)


def add_(self, other, *, alpha=1):
    _check_alpha(self, other, alpha)
    return add_op(self, other, alpha, out=self, inplace=True)


def add_out(self, other, *, alpha=1, out):
    _check_alpha(self, other, alpha)
    return add_op(self, other, alpha, out=out)


def _check_sub(self, other, alpha):
    if _is_bool(self) or _is_bool(other):
        if _is_bool(self) and _is_bool(other):
            raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                               "Use the `^` or `logical_xor()` operator instead.")
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.")
    _check_alpha(self, other, alpha)


def sub(self, other, *, alpha=1):
    _check_sub(self, other, alpha)
    return sub_op(self, other, alpha)


def sub_(self, other, *, alpha=1):
    _check_sub(self, other, alpha)
    return sub_op(self, other, alpha, out=self, inplace=True)


def sub_out(self, other, *, alpha=1, out):
    _check_sub(self, other, alpha)
    return sub_op(self, other, alpha, out=out)


def mul_(self, other):
    return mul_op(self, other, out=self, inplace=True)


def _check_zero_division(self, other):
    """ATen's CPU kernels raise for an integer divisor of zero (CUDA's leave the quotient undefined)."""
    on_cpu = self.is_cpu if isinstance(self, torch.Tensor) else True
    if isinstance(other, torch.Tensor):
        on_cpu = on_cpu and other.is_cpu
    if not on_cpu or (isinstance(self, torch.Tensor) and self.numel() == 0):
        return
    dtype = torch.result_type(self, other)
    if dtype.is_floating_point or dtype.is_complex or dtype is torch.bool:
        return  # floats divide to inf/nan; bool is refused by the kernel's dtype check
    zero = bool((other == 0).any()) if isinstance(other, torch.Tensor) else other == 0
    if zero:
        raise RuntimeError("ZeroDivisionError")


def _rounding_op(rounding_mode, self, other):
    if rounding_mode is None:
        return true_div_op
    if rounding_mode == "trunc":
        op = trunc_div_op
    elif rounding_mode == "floor":
        op = floor_div_op
    else:
        raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                           f"'{rounding_mode}'")
    _check_zero_division(self, other)
    return op


def div_(self, other):
    return true_div_op(self, other, out=self, inplace=True)


def div_mode(self, other, *, rounding_mode=None):
    return _rounding_op(rounding_mode, self, other)(self, other)


def div_mode_(self, other, *, rounding_mode=None):
    return _rounding_op(rounding_mode, self, other)(self, other, out=self, inplace=True)


def div_out_mode(self, other, *, rounding_mode=None, out):
    return _rounding_op(rounding_mode, self, other)(self, other, out=out)


def floor_divide(self, other):
    _check_zero_division(self, other)
    return floor_div_op(self, other)


def floor_divide_(self, other):
    _check_zero_division(self, other)
    return floor_div_op(self, other, out=self, inplace=True)


def floor_divide_out(self, other, *, out):
    _check_zero_division(self, other)
    return floor_div_op(self, other, out=out)


def floor_divide_scalar_out(self, other, *, out):
    _check_exact_out(out, floor_div_op, (self, other), "Expected out tensor to have dtype {want}, but got {got} "
                     "instead")
    return floor_divide_out(self, other, out=out)


def _check_exact_out(out, op, operands, message):
    """ATen's unary structured kernels (clamp, clamp_min, bitwise_not) want out= of exactly the result dtype."""
    want = op.result_dtypes(list(operands))[1][0]
    if out.dtype != want:
        raise RuntimeError(message.format(want=_name(want), got=_name(out.dtype)))


def _name(dtype):
    return str(dtype).replace("torch.", "")


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


def _clamp_op(self, min, max, scalars):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if max is None:
        op, bounds = clamp_min_op, (min,)
    elif min is None:
        op, bounds = clamp_max_op, (max,)
    else:
        op, bounds = clamp_op, (min, max)
    if scalars:
        # Scalar bounds are converted to the result dtype with ATen's overflow check (Scalar::to);
        # a floating tensor keeps its dtype whatever the bounds (ATen's clamp meta function).
        common = self.dtype if self.dtype.is_floating_point else op.result_dtypes([self, *bounds])[0]
        # ATen's CPU kernel converts the bounds to the tensor's dtype, its CUDA kernel to the compute dtype
        # (fp32 for fp16/bf16), each with Scalar::to's overflow check.
        target = common if self.device.type == "cpu" else compute_dtype(common)
        bounds = tuple(checked_scalar(b, target) for b in bounds)
    return op, bounds


def clamp(self, min=None, max=None):
    op, bounds = _clamp_op(self, min, max, True)
    return op(self, *bounds)


def clamp_(self, min=None, max=None):
    op, bounds = _clamp_op(self, min, max, True)
    return op(self, *bounds, out=self, inplace=True)


def clamp_out(self, min=None, max=None, *, out):
    op, bounds = _clamp_op(self, min, max, True)
    _check_exact_out(out, op, (self, *bounds), "Found dtype {got} but expected {want}")
    return op(self, *bounds, out=out)


def clamp_tensor(self, min=None, max=None):
    op, bounds = _clamp_op(self, min, max, False)
    return op(self, *bounds)


def clamp_tensor_(self, min=None, max=None):
    op, bounds = _clamp_op(self, min, max, False)
    return op(self, *bounds, out=self, inplace=True)


def clamp_tensor_out(self, min=None, max=None, *, out):
    op, bounds = _clamp_op(self, min, max, False)
    return op(self, *bounds, out=out)


def clamp_min(self, min):
    return clamp(self, min)


def clamp_min_(self, min):
    return clamp_(self, min)


def clamp_min_out(self, min, *, out):
    return clamp_out(self, min, out=out)


def _out_of(op):
    def with_out(self, other, *, out):
        return op(self, other, out=out)

    return with_out


def _inplace_of(op):
    def in_place(self, other):
        return op(self, other, out=self, inplace=True)

    return in_place


# --------------------------------------------------------------------------- samples


def _special_divide(dtype, device, quick):
    """Every pair of special values; integer divisors of zero made one (they get their own variant)."""
    x, y = specials_pair(dtype, device)
    return (x, nonzero_divisor(y, x)), {}


def _rounding_samples(mode):
    """div with rounding_mode=mode (None: true division) through div.Tensor_mode and its family."""
    kwargs = {"rounding_mode": mode}
    inplace = ("div_.Tensor_mode", lambda x, y, **k: x.div_(y, **k))
    return binary_op_samples(
        torch.div, out="div.out_mode", inplace=inplace, kwargs=kwargs, rhs_domain=_DIVISOR, nonzero_rhs=True,
        scalar_overload=("div.Scalar_mode", torch.ops.aten.div.Scalar_mode),
        zero_division=("div.Tensor_mode", lambda x, y, **k: torch.div(x, y, **k)),
        result="float" if mode is None else "same", grad=mode is None)


def _prefixed(prefix, generator, expects):
    """Run ``generator``'s samples under variant names ``prefix-...``, expecting ``expects``."""

    def samples(dtype, device, quick):
        cases = generator(dtype, device, quick)
        for case in cases:
            case.variant = f"{prefix}-{case.variant}"
            if case.expects is None:
                case.expects = expects
        return cases

    return samples


def _concat(*generators):
    def samples(dtype, device, quick):
        return [case for generator in generators for case in generator(dtype, device, quick)]

    return samples


def _div_samples():
    true_div = binary_op_samples(
        torch.div, out="div.out", inplace=("div_.Tensor", lambda x, y: x.div_(y)), grad=True, rhs_domain=_DIVISOR,
        scalar_overload=("div.Scalar", torch.ops.aten.div.Scalar))
    aliases = alias_samples(lambda dtype, device, quick: [], [
        # ATen's divide and true_divide are CompositeImplicitAutograd aliases: they decompose to div
        # before the backend key, so what runs is div's overload, and that is what gems serves.
        ("divide", torch.divide, "div.Tensor", two_tensors(rhs_domain=_DIVISOR)),
        ("divide-floor", lambda x, y: torch.divide(x, y, rounding_mode="floor"), "div.Tensor_mode",
         two_tensors(rhs_domain=_DIVISOR, nonzero=True)),
        ("divide-scalar", torch.divide, "div.Tensor", tensor_and_scalar(2.5)),
        ("divide-inplace", lambda x, y: x.divide_(y, rounding_mode="trunc"), "div_.Tensor_mode",
         two_tensors(rhs_domain=_DIVISOR, nonzero=True)),
        ("divide-out", lambda x, y: torch.divide(x, y, out=torch.empty_like(x, dtype=torch.float64)), "div.out",
         two_tensors(rhs_domain=_DIVISOR)),
        ("true_divide", torch.true_divide, "div.Tensor", two_tensors(rhs_domain=_DIVISOR)),
        ("true_divide-inplace", lambda x, y: x.double().true_divide_(y), "div_.Tensor",
         two_tensors(rhs_domain=_DIVISOR)),
        ("true_divide-out", lambda x, y: torch.true_divide(x, y, out=torch.empty_like(x, dtype=torch.float64)),
         "div.out", two_tensors(rhs_domain=_DIVISOR)),
        ("special-values-divide", torch.div, "div.Tensor", _special_divide),
        ("special-values-trunc", lambda x, y: torch.div(x, y, rounding_mode="trunc"), "div.Tensor_mode",
         _special_divide),
        ("special-values-floor", lambda x, y: torch.div(x, y, rounding_mode="floor"), "div.Tensor_mode",
         _special_divide),
        ("inplace-scalar", lambda x: x.div_(2, rounding_mode="floor"), "div_.Tensor_mode",
         lambda dtype, device, quick: ((make_tensor(shape_for(quick), dtype, device),), {})),
        ("scalar-inplace-overload", lambda x: torch.ops.aten.div_.Scalar(x, 2.5), "div_.Scalar",
         lambda dtype, device, quick: ((make_tensor(shape_for(quick), torch.float32, device),), {})),
        ("scalar-mode-inplace-overload", lambda x: torch.ops.aten.div_.Scalar_mode(x, 3, rounding_mode="floor"),
         "div_.Scalar_mode", lambda dtype, device, quick: ((make_tensor(shape_for(quick), dtype, device),), {})),
        ("bad-rounding-mode", lambda x, y: torch.div(x, y, rounding_mode="round"), None, two_tensors()),
    ])
    return _concat(true_div,
                   _prefixed("trunc", _rounding_samples("trunc"), "div.Tensor_mode"),
                   _prefixed("floor", _rounding_samples("floor"), "div.Tensor_mode"),
                   _prefixed("mode-none", _rounding_samples(None), "div.Tensor_mode"),
                   aliases)


def _floor_divide_samples():
    base = binary_op_samples(
        torch.floor_divide, out="floor_divide.out", inplace=("floor_divide_.Tensor", lambda x, y: x.floor_divide_(y)),
        rhs_domain=_DIVISOR, nonzero_rhs=True,
        scalar_overload=("floor_divide.Scalar", torch.ops.aten.floor_divide.Scalar),
        zero_division=("floor_divide", torch.floor_divide))
    extra = alias_samples(lambda dtype, device, quick: [], [
        ("special-values-nonzero", torch.floor_divide, "floor_divide", _special_divide),
        ("inplace-scalar-overload", lambda x: torch.ops.aten.floor_divide_.Scalar(x, 3), "floor_divide_.Scalar",
         lambda dtype, device, quick: ((make_tensor(shape_for(quick), dtype, device),), {})),
        ("scalar-out", lambda x, o: torch.ops.aten.floor_divide.Scalar_out(x, 3, out=o), "floor_divide.Scalar_out",
         lambda dtype, device, quick: ((make_tensor(shape_for(quick), dtype, device),
                                        torch.empty(0, dtype=dtype, device=device)), {})),
        ("scalar-out-wrong-dtype", lambda x: torch.ops.aten.floor_divide.Scalar_out(
            x, 3, out=torch.empty(0, dtype=torch.float64 if x.dtype != torch.float64 else torch.float32,
                                  device=x.device)), None,
         lambda dtype, device, quick: ((make_tensor(shape_for(quick), dtype, device),), {})),
    ])

    def samples(dtype, device, quick):
        # The generic special-values pairs hold integer zero divisors; "special-values-nonzero" replaces them.
        cases = [c for c in base(dtype, device, quick)
                 if dtype.is_floating_point or c.variant != "special-values"]
        return cases + extra(dtype, device, quick)

    return samples


_EXPONENT = {"low": -3.0, "high": 3.0, "int_low": -2, "int_high": 6}


def _pow_samples():
    base = binary_op_samples(
        torch.pow, out="pow.Tensor_Tensor_out", inplace=("pow_.Tensor", lambda x, y: x.pow_(y)), grad=True,
        domain={"low": 0.25, "high": 4.0}, rhs_domain=_EXPONENT, scalar_expects="pow.Tensor_Scalar")

    def scalar_exponent_cases(dtype, device, quick):
        shape = shape_for(quick)
        x = make_tensor(shape, dtype, device)
        specials = specials_pair(dtype, device)[0]
        cases = []
        for exponent in (2, 3, 0.5, -0.5, -1, -2, 0, 1, 2.5, -1.5):
            if not dtype.is_floating_point and (isinstance(exponent, float) or exponent < 0):
                continue
            cases.append(Sample(f"exponent-{exponent}", (x, exponent), expects="pow.Tensor_Scalar"))
            cases.append(Sample(f"exponent-{exponent}-specials", (specials, exponent), expects="pow.Tensor_Scalar"))
        if not dtype.is_floating_point:
            cases.append(Sample("negative-int-exponent-error", (x, -2)))
            cases.append(Sample("exponent-float-on-int", (x, 0.5), expects="pow.Tensor_Scalar"))
        cases += [
            Sample("scalar-base", (2.5 if dtype.is_floating_point else 2, make_tensor(shape, dtype, device,
                                                                                     **_EXPONENT)),
                   expects="pow.Scalar"),
            Sample("scalar-float-base", (1.5, make_tensor(shape, dtype, device, **_EXPONENT)), expects="pow.Scalar"),
            Sample("scalar-base-out", (2, make_tensor(shape, dtype, device, **_EXPONENT),
                                       torch.empty(0, dtype=dtype, device=device)),
                   expects="pow.Scalar_out", call=lambda s, e, o: torch.pow(s, e, out=o)),
            Sample("tensor-scalar-out", (x, 2, torch.empty(0, dtype=dtype, device=device)),
                   expects="pow.Tensor_Scalar_out", call=lambda a, e, o: torch.pow(a, e, out=o)),
            Sample("inplace-scalar", (x, 3), expects="pow_.Scalar", call=lambda a, e: a.pow_(e)),
            Sample("inplace-scalar-sqrt", (x, 0.5), expects="pow_.Scalar", call=lambda a, e: a.pow_(e)),
        ]
        if dtype.is_floating_point:
            cases.append(Sample("negative-base-fraction", (-x.abs(), make_tensor(shape, dtype, device, **_EXPONENT))))
        else:
            cases.append(Sample("inplace-scalar-float-error", (x, 0.5), call=lambda a, e: a.pow_(e)))
        return cases

    def samples(dtype, device, quick):
        return base(dtype, device, quick) + scalar_exponent_cases(dtype, device, quick)

    return samples


def _clamp_samples():
    def samples(dtype, device, quick):
        shape = shape_for(quick)
        rows, cols = shape
        make = lambda s, d=dtype, **k: make_tensor(s, d, device, **k)
        lo, hi = (-1.5, 2.5) if dtype.is_floating_point else ((20, 80) if dtype == torch.uint8 else (-20, 30))
        specials = specials_pair(dtype, device)[0]
        x = make(shape)
        cases = [
            Sample("contiguous", (make(shape), lo, hi)),
            Sample("noncontiguous-transposed", (make((cols, rows)).t(), lo, hi)),
            Sample("noncontiguous-strided", (make((rows, cols * 2))[:, ::2], lo, hi)),
            Sample("0d", (make(()), lo, hi)),
            Sample("empty", (make((0, cols)), lo, hi)),
            Sample("special-values", (specials, lo, hi)),
            Sample("min-only", (x, lo)),
            Sample("max-only", (x, None, hi)),
            Sample("min-above-max", (x, hi, lo)),
            Sample("float-bounds-on-int", (x, 0.5, 10.5)),
            Sample("none-error", (x, None, None)),
            # Past the dtype's range for fp16, bf16, fp32, int8, int16, uint8: ATen's Scalar::to refuses it.
            Sample("bound-overflow", (x, {torch.float16: 1e6, torch.float64: 1e300}.get(
                dtype, 1e39 if dtype.is_floating_point else 100000), None)),
            Sample("inplace", (make(shape), lo, hi), expects="clamp_", call=torch.clamp_),
            Sample("out", (make(shape), lo, hi, torch.empty(0, dtype=dtype, device=device)), expects="clamp.out",
                   call=lambda a, mn, mx, o: torch.clamp(a, mn, mx, out=o)),
            Sample("out-wrong-dtype", (make(shape), lo, hi), call=lambda a, mn, mx: torch.clamp(
                a, mn, mx, out=torch.empty(0, dtype=torch.float64 if a.dtype != torch.float64 else torch.float32,
                                           device=a.device))),
            Sample("tensor-bounds", (x, make(shape), make(shape)), expects="clamp.Tensor"),
            Sample("tensor-bounds-broadcast", (x, make((rows, 1)), make((cols,)) + 5), expects="clamp.Tensor"),
            Sample("tensor-min-only", (x, make(shape)), expects="clamp.Tensor"),
            Sample("tensor-max-only", (x, None, make((cols,))), expects="clamp.Tensor"),
            Sample("tensor-none-error", (x, None, None), call=lambda a, mn, mx: torch.ops.aten.clamp.Tensor(a, mn, mx)),
            Sample("tensor-bounds-promote", (x, make(shape, torch.float64), make(shape, torch.float64)),
                   expects="clamp.Tensor"),
            Sample("tensor-inplace", (make(shape), make(shape), make(shape)), expects="clamp_.Tensor",
                   call=torch.clamp_),
            Sample("tensor-out", (x, make(shape), make(shape), torch.empty(0, dtype=dtype, device=device)),
                   expects="clamp.Tensor_out", call=lambda a, mn, mx, o: torch.clamp(a, mn, mx, out=o)),
            Sample("tensor-broadcast-error", (x, make((3,)), None)),
            Sample("clamp_min", (x, lo), expects="clamp_min", call=torch.clamp_min),
            Sample("clamp_min-inplace", (make(shape), lo), expects="clamp_min_", call=torch.clamp_min_),
            Sample("clamp_min-out", (x, lo, torch.empty(0, dtype=dtype, device=device)), expects="clamp_min.out",
                   call=lambda a, mn, o: torch.clamp_min(a, mn, out=o)),
            # clip and clip_ are CompositeImplicitAutograd aliases of clamp: ATen runs clamp's overloads.
            Sample("clip", (x, lo, hi), expects="clamp", call=torch.clip),
            Sample("clip-inplace", (make(shape), lo, hi), expects="clamp_", call=torch.clip_),
            Sample("clip-tensor", (x, make(shape), make(shape)), expects="clamp.Tensor", call=torch.clip),
        ]
        if dtype.is_floating_point:
            nan = float("nan")
            cases += [
                Sample("nan-min", (x, nan, hi)),
                Sample("nan-max", (x, lo, nan)),
                Sample("nan-tensor-bounds", (specials, torch.full_like(specials, nan), None), expects="clamp.Tensor"),
                Sample("grad", (make(shape).requires_grad_(), lo, hi), grad=True),
            ]
        else:
            cases.append(Sample("inplace-float-bound-error", (make(shape), 0.5, 10.5), call=torch.clamp_))
        return cases

    return samples


SPECS = [
    OpSpec(
        name="add", family="pointwise",
        impls={"add.Tensor": add, "add_.Tensor": add_, "add.out": add_out},
        call=torch.add,
        samples=binary_op_samples(torch.add, out="add.out", inplace=("add_.Tensor", lambda x, y, **k: x.add_(y, **k)),
                                  grad=True, kwargs={"alpha": 2}),
        dtypes=NUMERIC_AND_BOOL, perf=pointwise_perf(2),
    ),
    OpSpec(
        name="sub", family="pointwise",
        impls={"sub.Tensor": sub, "sub_.Tensor": sub_, "sub.out": sub_out},
        call=torch.sub,
        samples=alias_samples(
            binary_op_samples(torch.sub, out="sub.out", inplace=("sub_.Tensor", lambda x, y, **k: x.sub_(y, **k)),
                              grad=True, kwargs={"alpha": 2}),
            [("bool-operand-error", torch.sub, None,
              lambda dtype, device, quick: ((make_tensor(shape_for(quick), dtype, device),
                                             make_tensor(shape_for(quick), torch.bool, device)), {})),
             ("bool-scalar-error", torch.sub, None, lambda dtype, device, quick: (
                 (make_tensor(shape_for(quick), dtype, device), True), {})),
             ("alpha-float-on-int", lambda x, y: torch.sub(x, y, alpha=0.5), None, two_tensors())]),
        dtypes=NUMERIC, perf=pointwise_perf(2),
    ),
    OpSpec(
        name="mul", family="pointwise",
        impls={"mul.Tensor": mul_op, "mul_.Tensor": mul_, "mul.out": _out_of(mul_op)},
        call=torch.mul,
        samples=binary_op_samples(torch.mul, out="mul.out", inplace=("mul_.Tensor", lambda x, y: x.mul_(y)),
                                  grad=True),
        dtypes=NUMERIC_AND_BOOL, perf=pointwise_perf(2),
    ),
    OpSpec(
        name="div", family="pointwise",
        impls={"div.Tensor": true_div_op, "div.Scalar": true_div_op, "div.Tensor_mode": div_mode,
               "div.Scalar_mode": div_mode, "div.out": _out_of(true_div_op), "div.out_mode": div_out_mode,
               "div_.Tensor": div_, "div_.Scalar": div_, "div_.Tensor_mode": div_mode_,
               "div_.Scalar_mode": div_mode_},
        call=torch.div, samples=_div_samples(), dtypes=NUMERIC, perf=pointwise_perf(2, domain=_DIVISOR),
    ),
    OpSpec(
        name="floor_divide", family="pointwise",
        impls={"floor_divide": floor_divide, "floor_divide.Scalar": floor_divide,
               "floor_divide_.Tensor": floor_divide_, "floor_divide_.Scalar": floor_divide_,
               "floor_divide.out": floor_divide_out, "floor_divide.Scalar_out": floor_divide_scalar_out},
        call=torch.floor_divide, samples=_floor_divide_samples(), dtypes=NUMERIC,
        perf=pointwise_perf(2, domain=_DIVISOR),
    ),
    OpSpec(
        name="pow", family="pointwise",
        impls={"pow.Tensor_Tensor": pow_op, "pow.Tensor_Scalar": pow_tensor_scalar, "pow.Scalar": pow_op,
               "pow_.Tensor": pow_, "pow_.Scalar": pow_tensor_scalar_,
               "pow.Tensor_Tensor_out": _out_of(pow_op), "pow.Tensor_Scalar_out": pow_tensor_scalar_out,
               "pow.Scalar_out": _out_of(pow_op)},
        call=torch.pow, samples=_pow_samples(), dtypes=NUMERIC, perf=pointwise_perf(2, domain={"low": 0.5, "high": 2}),
        known_failures={("interpreter", "float16", "exponent-0.5-specials"):
                        "ATen's CPU fp16 pow(-0.0, 0.5) is +0.0 (its bf16/fp32/fp64 give sqrt's -0.0, as gems does)"},
    ),
    OpSpec(
        name="maximum", family="pointwise",
        impls={"maximum": maximum_op, "maximum.out": _out_of(maximum_op)},
        call=torch.maximum,
        samples=binary_op_samples(torch.maximum, out="maximum.out", grad=True, scalar=None, float_scalar=False),
        dtypes=NUMERIC_AND_BOOL, perf=pointwise_perf(2),
    ),
    OpSpec(
        name="minimum", family="pointwise",
        impls={"minimum": minimum_op, "minimum.out": _out_of(minimum_op)},
        call=torch.minimum,
        samples=binary_op_samples(torch.minimum, out="minimum.out", grad=True, scalar=None, float_scalar=False),
        dtypes=NUMERIC_AND_BOOL, perf=pointwise_perf(2),
    ),
    OpSpec(
        name="clamp", family="pointwise",
        impls={"clamp": clamp, "clamp.Tensor": clamp_tensor, "clamp_": clamp_, "clamp_.Tensor": clamp_tensor_,
               "clamp.out": clamp_out, "clamp.Tensor_out": clamp_tensor_out,
               "clamp_min": clamp_min, "clamp_min_": clamp_min_, "clamp_min.out": clamp_min_out},
        call=torch.clamp, samples=_clamp_samples(), dtypes=NUMERIC, perf=scalars_perf(-0.5, 0.5),
    ),
]
