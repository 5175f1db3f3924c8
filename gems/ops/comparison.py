"""Comparisons: eq, ne, gt, ge, lt, le (Tensor and Scalar, with out=), isclose, allclose.

The operands are promoted to their common dtype (a scalar is rounded to it first, so an int8
tensor compared with 1000 compares with 1000 wrapped to int8, as ATen does) and the result is
bool. NaN compares unequal to everything, ne included. ``greater`` is a CompositeImplicitAutograd
alias that ATen decomposes to ``gt`` before the backend key, so gt's overloads serve it.

isclose mirrors ATen's composite formula step by step, rounding every intermediate to the input
dtype as ATen's separate ops do (for fp16, ``rtol * other`` is rounded to fp16 before ``atol`` is
added), so that a borderline pair gets ATen's answer; it runs as one fused kernel.
"""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import PointwiseOp, Promotion
from gems.ops.reduction.sum import sum_all
from gems.spec import OpSpec, Sample
from gems.testing.perf_inputs import pointwise_perf
from gems.testing.samples import make_tensor, shape_for, special_values
from gems.testing.samples_extra import alias_samples, comparison_samples, specials_pair, two_tensors

ALL_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.int8, torch.int16, torch.int32,
              torch.int64, torch.uint8, torch.bool)


@triton.jit
def _eq(x, y):
    return x == y


@triton.jit
def _ne(x, y):
    return x != y


@triton.jit
def _gt(x, y):
    return x > y


@triton.jit
def _ge(x, y):
    return x >= y


@triton.jit
def _lt(x, y):
    return x < y


@triton.jit
def _le(x, y):
    return x <= y


@triton.jit
def _round(v, COMMON: tl.constexpr):
    """``v`` rounded to the storage dtype, as a separate ATen op would store it."""
    return v.to(COMMON).to(v.dtype)


@triton.jit
def _isclose(x, y, rtol, atol, equal_nan, COMMON: tl.constexpr):
    close = x == y
    if x.dtype.is_floating():
        close = close | ((x != x) & (y != y) & (equal_nan != 0))
        # allowed = atol + |rtol * other|; actual = |self - other|: each step stored in the input dtype
        allowed = _round(tl.cast(atol, COMMON).to(x.dtype) + tl.abs(_round(rtol * y, COMMON)), COMMON)
        actual = tl.abs(_round(x - y, COMMON))
    else:
        # Integers and bool: ATen casts ``other`` to the default float dtype, so both the error and
        # the tolerance are float32 values (an int8 difference does not wrap).
        xf = x.to(tl.float32)
        yf = y.to(tl.float32)
        allowed = atol + tl.abs(rtol * yf)
        actual = tl.abs(xf - yf)
    # a finite error within the tolerance (x - x == 0 exactly when x is finite)
    return close | (((actual - actual) == 0) & (actual <= allowed))


_BODIES = {"eq": _eq, "ne": _ne, "gt": _gt, "ge": _ge, "lt": _lt, "le": _le}
OPS = {name: PointwiseOp(name, body, operands=2, promotion=Promotion.BOOL) for name, body in _BODIES.items()}
isclose_op = PointwiseOp("isclose", _isclose, operands=2, scalars=("rtol", "atol", "equal_nan"),
                         promotion=Promotion.BOOL, common_arg=True)


def _type_name(dtype):
    return {torch.float16: "Half", torch.bfloat16: "BFloat16", torch.float32: "Float", torch.float64: "Double",
            torch.int8: "Char", torch.int16: "Short", torch.int32: "Int", torch.int64: "Long", torch.uint8: "Byte",
            torch.bool: "Bool"}.get(dtype, str(dtype))


def _check_isclose(self, other, rtol, atol, equal_nan):
    if self.dtype != other.dtype:
        raise RuntimeError(f"{_type_name(self.dtype)} did not match {_type_name(other.dtype)}")
    if equal_nan and self.is_complex():
        raise RuntimeError("isclose with equal_nan=True is not supported for complex inputs.")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")


def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    _check_isclose(self, other, rtol, atol, equal_nan)
    return isclose_op(self, other, float(rtol), float(atol), bool(equal_nan))


def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    _check_isclose(self, other, rtol, atol, equal_nan)
    close = isclose_op(self, other, float(rtol), float(atol), bool(equal_nan))
    return int(sum_all(close)) == close.numel()  # counted by a gems kernel: Tensor.all() would be ATen's


def _impls(name):
    op = OPS[name]  # the op itself serves every overload: (self, other, out=None)
    return {f"{name}.Tensor": op, f"{name}.Scalar": op, f"{name}.Tensor_out": op, f"{name}.Scalar_out": op}


def _greater_aliases(samples):
    """greater.* is decomposed by ATen into gt.* before the backend: gems serves gt's overloads."""
    def out_args(dtype, device, quick):
        x, y = two_tensors()(dtype, device, quick)[0]
        return (x, y, torch.empty(0, dtype=torch.bool, device=device)), {}

    def scalar_out_args(dtype, device, quick):
        x = make_tensor(shape_for(quick), dtype, device)
        return (x, torch.empty(0, dtype=torch.bool, device=device)), {}

    return alias_samples(samples, [
        ("greater-tensor", torch.greater, "gt.Tensor", two_tensors()),
        ("greater-scalar", lambda x: torch.greater(x, 1), "gt.Scalar",
         lambda dtype, device, quick: ((make_tensor(shape_for(quick), dtype, device),), {})),
        ("greater-out", lambda x, y, o: torch.greater(x, y, out=o), "gt.Tensor_out", out_args),
        ("greater-scalar-out", lambda x, o: torch.greater(x, 1, out=o), "gt.Scalar_out", scalar_out_args),
    ])


def _isclose_samples(call, expects, wrap=lambda r: r):
    """Pairs well inside or well outside the tolerance (0.25x or 4x of it). The oracle computes in
    float64 where ATen rounds every step to the input dtype, so a pair on the edge could get a
    different answer from each: the margins keep every pair's answer the same in both."""

    def samples(dtype, device, quick):
        shape = shape_for(quick)
        cols = shape[1]
        x = make_tensor(shape, dtype, device)
        factor = torch.tensor([-4.0, -0.25, 0.25, 4.0], dtype=torch.float64, device=device)[
            make_tensor(shape, torch.int64, device, int_low=0, int_high=3)]
        if dtype.is_floating_point:
            eps = torch.finfo(dtype).eps
            rtol, atol = 16 * eps, 256 * eps  # |x| < 4: rounding x moves it by under eps * 4
            near = (x.double() * (1 + factor * rtol)).to(dtype)
            near_abs = (x.double() + factor * atol).to(dtype)
        else:
            rtol, atol = 0.013, 0.5  # no integer pair sits on |x - y| == rtol * |y|
            near = x + make_tensor(shape, dtype, device, int_low=-2, int_high=2)
            near_abs = near
        sx, sy = specials_pair(dtype, device)
        fn = lambda *a, **k: wrap(call(*a, **k))
        cases = [
            Sample("contiguous", (x, near), {"rtol": rtol}, call=fn, expects=expects),
            Sample("defaults", (x, near), call=fn, expects=expects),
            Sample("equal", (x, x.clone()), call=fn, expects=expects),
            Sample("noncontiguous-transposed", (x.t(), near.t()), {"rtol": rtol}, call=fn, expects=expects),
            Sample("broadcast", (x, x[:1]), {"rtol": rtol}, call=fn, expects=expects),
            Sample("special-values", (sx, sy), call=fn, expects=expects),
            Sample("special-values-equal-nan", (sx, sy), {"equal_nan": True}, call=fn, expects=expects),
            Sample("zero-tolerance", (x, near), {"rtol": 0.0, "atol": 0.0}, call=fn, expects=expects),
            Sample("atol-only", (x, near_abs), {"rtol": 0.0, "atol": atol}, call=fn, expects=expects),
            Sample("empty", (make_tensor((0, cols), dtype, device),) * 2, call=fn, expects=expects),
            Sample("0d", (make_tensor((), dtype, device), make_tensor((), dtype, device)), call=fn, expects=expects),
            Sample("dtype-mismatch-error", (x, near.to(torch.float64 if dtype != torch.float64 else torch.float32)),
                   call=fn),
            Sample("negative-rtol-error", (x, near), {"rtol": -1.0}, call=fn),
            Sample("negative-atol-error", (x, near), {"atol": -1.0}, call=fn),
            Sample("broadcast-error", (x, make_tensor((5,), dtype, device)), call=fn),
        ]
        if dtype != torch.bool:
            far = x + (special_values(dtype, device)[5] if dtype.is_floating_point else 7)
            cases.append(Sample("far", (x, far), call=fn, expects=expects))
        return cases

    return samples


SPECS = [
    OpSpec(
        name=name, family="pointwise", impls=_impls(name), call=getattr(torch, name),
        samples=(_greater_aliases if name == "gt" else (lambda s: s))(
            comparison_samples(name, getattr(torch, name), (f"{name}.Tensor_out", f"{name}.Scalar_out"))),
        dtypes=ALL_DTYPES, tolerance="exact", perf=pointwise_perf(2),
    )
    for name in _BODIES
] + [
    OpSpec(
        name="isclose", family="pointwise", impls={"isclose": isclose}, call=torch.isclose,
        samples=_isclose_samples(torch.isclose, "isclose"), dtypes=ALL_DTYPES, tolerance="exact",
        perf=pointwise_perf(2),
    ),
    OpSpec(
        # allclose returns a Python bool: the samples wrap it in a tensor so that it is compared.
        name="allclose", family="pointwise", impls={"allclose": allclose}, call=torch.allclose,
        samples=_isclose_samples(torch.allclose, "allclose", wrap=torch.tensor), dtypes=ALL_DTYPES,
        tolerance="exact", no_launch={"empty": "empty tensors are all close: True, with no element to compare"},
    ),
]
