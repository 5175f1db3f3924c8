"""div: true division and rounding_mode "trunc" / "floor" (Tensor and Scalar, in-place, out=).

- true division promotes integers to float (Promotion.INT_TO_FLOAT) and divides with IEEE rounding
  (Triton's fp32 ``/`` is an approximation on the GPU; ``tl.div_rn`` is exact);
- trunc / floor division follow ATen's c10::div_floor_floating and div_floor_integer; integer division
  by zero raises RuntimeError("ZeroDivisionError") on CPU, as ATen's CPU kernels do, and is left
  undefined elsewhere, as CUDA's are. floor_divide.py serves the same floor division.
- ``divide`` and ``true_divide`` are CompositeImplicitAutograd aliases: ATen decomposes them to div
  before the backend key, so div's overloads serve them.
"""

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp, Promotion
from gems.dtypes import NUMERIC
from gems.ops.pointwise.shared import fdiv, out_of, pointwise_perf
from gems.spec import OpSpec

# Divisors away from zero keep random float samples meaningful (no 1/tiny).
DIVISOR = {"low": 0.5, "high": 4.0}


@triton.jit
def _true_div(x, y):
    return fdiv(x, y)


@triton.jit
def _trunc_div(x, y):
    if x.dtype.is_floating():
        q = fdiv(x, y)
        r = tl.where(q < 0, tl.ceil(q), tl.floor(q))
    else:
        r = x // y  # Triton's integer division truncates, like C
    return r


@triton.jit
def _floor_div(x, y):
    if x.dtype.is_floating():
        # c10::div_floor_floating: floor((a - fmod(a, b)) / b), corrected towards the nearest integer
        mod = x % y  # C fmod for floats
        div = fdiv(x - mod, y)
        div = tl.where((mod != 0) & ((y < 0) != (mod < 0)), div - 1.0, div)
        floordiv = tl.floor(div)
        floordiv = tl.where(div - floordiv > 0.5, floordiv + 1.0, floordiv)
        q = fdiv(x, y)
        zero = libdevice.copysign(tl.full(q.shape, 0.0, q.dtype), q)
        floordiv = tl.where(div != 0, floordiv, zero)
        r = tl.where(y == 0, q, floordiv)
    else:
        # c10::div_floor_integer: truncate, then step down where the signs differ and a remainder is left
        q = x // y
        rem = x % y
        r = tl.where((rem != 0) & ((rem < 0) != (y < 0)), q - 1, q)
    return r


# ATen's div uses a scalar operand at compute precision, without rounding it to fp16 first.
true_div_op = PointwiseOp("div", _true_div, operands=2, promotion=Promotion.INT_TO_FLOAT, round_scalars=False)
trunc_div_op = PointwiseOp("div_trunc", _trunc_div, operands=2, dtypes=NUMERIC, round_scalars=False)
floor_div_op = PointwiseOp("div_floor", _floor_div, operands=2, dtypes=NUMERIC, round_scalars=False)


# What check_zero_division asks of ATen: a decision that raises before any launch, never a value.
ZERO_DIVISION_CHECK = dict.fromkeys(
    ("aten.eq.Scalar", "aten.any.default"),
    "ATen's CPU kernels raise ZeroDivisionError for an integer divisor of zero: whether one is zero is read back "
    "to raise it before any launch (CPU tensors only; CUDA's kernels leave the quotient undefined)")


def check_zero_division(self, other):
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
    check_zero_division(self, other)
    return op


def div_(self, other):
    return true_div_op(self, other, out=self, inplace=True)


def div_mode(self, other, *, rounding_mode=None):
    return _rounding_op(rounding_mode, self, other)(self, other)


def div_mode_(self, other, *, rounding_mode=None):
    return _rounding_op(rounding_mode, self, other)(self, other, out=self, inplace=True)


def div_out_mode(self, other, *, rounding_mode=None, out):
    return _rounding_op(rounding_mode, self, other)(self, other, out=out)


# --------------------------------------------------------------------------- samples


def special_divide(dtype, device, quick):
    """Every pair of special values; integer divisors of zero made one (they get their own variant)."""
    from gems.testing.samples_extra import nonzero_divisor, specials_pair

    x, y = specials_pair(dtype, device)
    return (x, nonzero_divisor(y, x)), {}


def _samples(dtype, device, quick):
    from gems.testing.samples import combined
    from gems.testing.samples_edges import exact_half_samples, integer_extreme_samples
    from gems.testing.samples_extra import alias_samples, binary_op_samples, one_tensor, tensor_and_scalar, two_tensors
    from gems.testing.samples_pwbinary import scalar_overload_samples

    def rounding(mode):
        """div with rounding_mode=mode (None: true division) through div.Tensor_mode and its family."""
        return binary_op_samples(
            torch.div, out="div.out_mode", inplace=("div_.Tensor_mode", lambda x, y, **k: x.div_(y, **k)),
            kwargs={"rounding_mode": mode}, rhs_domain=DIVISOR, nonzero_rhs=True,
            scalar_overload=("div.Scalar_mode", torch.ops.aten.div.Scalar_mode),
            zero_division=("div.Tensor_mode", lambda x, y, **k: torch.div(x, y, **k)),
            result="float" if mode is None else "same", grad=mode is None,
            prefix=f"{mode or 'mode-none'}-", expects="div.Tensor_mode")

    divisors = two_tensors(rhs_domain=DIVISOR)
    nonzero = two_tensors(rhs_domain=DIVISOR, nonzero=True)
    wide_out = lambda x: torch.empty_like(x, dtype=torch.float64)
    generators = [
        binary_op_samples(torch.div, out="div.out", inplace=("div_.Tensor", lambda x, y: x.div_(y)), grad=True,
                          rhs_domain=DIVISOR, scalar_overload=("div.Scalar", torch.ops.aten.div.Scalar)),
        rounding("trunc"), rounding("floor"), rounding(None),
        # Quotients exactly half-way between two integers and integer extremes, in every rounding mode.
        combined(*[(mode or "mode-none", edges)
                   for mode in ("trunc", "floor", None)
                   for edges in (exact_half_samples(kind="quotients", kwargs={"rounding_mode": mode},
                                                    expects="div.Tensor_mode"),
                                 integer_extreme_samples(lambda x, y, mode=mode: torch.div(x, y, rounding_mode=mode),
                                                         operands=2, nonzero_rhs=True, expects="div.Tensor_mode"))]),
        alias_samples(lambda dtype, device, quick: [], [
            # ATen's divide and true_divide are CompositeImplicitAutograd aliases: they decompose to div
            # before the backend key, so what runs is div's overload, and that is what gems serves.
            ("divide", torch.divide, "div.Tensor", divisors),
            ("divide-floor", lambda x, y: torch.divide(x, y, rounding_mode="floor"), "div.Tensor_mode", nonzero),
            ("divide-scalar", torch.divide, "div.Tensor", tensor_and_scalar(2.5)),
            ("divide-inplace", lambda x, y: x.divide_(y, rounding_mode="trunc"), "div_.Tensor_mode", nonzero),
            ("divide-out", lambda x, y: torch.divide(x, y, out=wide_out(x)), "div.out", divisors),
            ("true_divide", torch.true_divide, "div.Tensor", divisors),
            ("true_divide-inplace", lambda x, y: x.double().true_divide_(y), "div_.Tensor", divisors),
            ("true_divide-out", lambda x, y: torch.true_divide(x, y, out=wide_out(x)), "div.out", divisors),
            ("special-values-divide", torch.div, "div.Tensor", special_divide),
            ("special-values-trunc", lambda x, y: torch.div(x, y, rounding_mode="trunc"), "div.Tensor_mode",
             special_divide),
            ("special-values-floor", lambda x, y: torch.div(x, y, rounding_mode="floor"), "div.Tensor_mode",
             special_divide),
            ("inplace-scalar", lambda x: x.div_(2, rounding_mode="floor"), "div_.Tensor_mode", one_tensor()),
            ("scalar-inplace-overload", lambda x: torch.ops.aten.div_.Scalar(x, 2.5), "div_.Scalar",
             one_tensor(torch.float32)),
            ("scalar-mode-inplace-overload", lambda x: torch.ops.aten.div_.Scalar_mode(x, 3, rounding_mode="floor"),
             "div_.Scalar_mode", one_tensor()),
            ("bad-rounding-mode", lambda x, y: torch.div(x, y, rounding_mode="round"), None, two_tensors()),
        ]),
    ]
    # div.Scalar as C++ callers reach it: 0-d, expanded and transposed tensors, the generated div.Scalar_out
    generators.append(scalar_overload_samples(torch.ops.aten.div.Scalar, torch.ops.aten.div_.Scalar, "div"))
    return [case for generate in generators for case in generate(dtype, device, quick)]


SPECS = [
    OpSpec(
        name="div", family="pointwise",
        impls={"div.Tensor": true_div_op, "div.Scalar": true_div_op, "div.Tensor_mode": div_mode,
               "div.Scalar_mode": div_mode, "div.out": out_of(true_div_op), "div.out_mode": div_out_mode,
               "div_.Tensor": div_, "div_.Scalar": div_, "div_.Tensor_mode": div_mode_,
               "div_.Scalar_mode": div_mode_},
        call=torch.div, samples=_samples, dtypes=NUMERIC, perf=pointwise_perf(2, domain=DIVISOR),
        aten_decisions=ZERO_DIVISION_CHECK,
    ),
]
