"""isclose: |x - y| <= atol + rtol |y| (NaN equal to NaN with equal_nan). allclose.py reduces it.

It mirrors ATen's composite formula step by step, rounding every intermediate to the input dtype as
ATen's separate ops do (for fp16, ``rtol * other`` is rounded to fp16 before ``atol`` is added), so
that a borderline pair gets ATen's answer; it runs as one fused kernel.
"""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import PointwiseOp, Promotion
from gems.dtypes import ALL, ATEN_NAMES
from gems.ops.pointwise.shared import pointwise_perf
from gems.spec import OpSpec


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


isclose_op = PointwiseOp("isclose", _isclose, operands=2, scalars=("rtol", "atol", "equal_nan"),
                         promotion=Promotion.BOOL, common_arg=True)


def check_isclose(self, other, rtol, atol, equal_nan):
    if self.dtype != other.dtype:
        raise RuntimeError(f"{ATEN_NAMES.get(self.dtype, self.dtype)} did not match "
                           f"{ATEN_NAMES.get(other.dtype, other.dtype)}")
    if equal_nan and self.is_complex():
        raise RuntimeError("isclose with equal_nan=True is not supported for complex inputs.")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")


def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    check_isclose(self, other, rtol, atol, equal_nan)
    return isclose_op(self, other, float(rtol), float(atol), bool(equal_nan))


def closeness_samples(call, expects, wrap=lambda r: r):
    """Samples of isclose and allclose: pairs well inside or well outside the tolerance (0.25x or 4x of
    it). The oracle computes in float64 where ATen rounds every step to the input dtype, so a pair on
    the edge could get a different answer from each: the margins keep every pair's answer the same in both."""

    def samples(dtype, device, quick):
        from gems.spec import Sample
        from gems.testing.samples import make_tensor, shape_for, special_values
        from gems.testing.samples_extra import specials_pair

        shape = shape_for(quick)
        cols = shape[1]
        if dtype.is_floating_point:
            eps = torch.finfo(dtype).eps
            rtol, atol = 16 * eps, 256 * eps  # |x| < 4: rounding x moves it by under eps * 4
        else:
            rtol, atol = 0.013, 0.5  # no integer pair sits on |x - y| == rtol * |y|

        def pair(absolute=False):
            x = make_tensor(shape, dtype, device)
            if not dtype.is_floating_point:
                return x, x + make_tensor(shape, dtype, device, int_low=-2, int_high=2)
            factor = torch.tensor([-4.0, -0.25, 0.25, 4.0], dtype=torch.float64, device=device)[
                make_tensor(shape, torch.int64, device, int_low=0, int_high=3)]
            near = x.double() + factor * atol if absolute else x.double() * (1 + factor * rtol)
            return x, near.to(dtype)

        def other_dtype():
            x, near = pair()
            return x, near.to(torch.float64 if dtype != torch.float64 else torch.float32)

        def far():
            x = make_tensor(shape, dtype, device)
            return x, x + (special_values(dtype, device)[5] if dtype.is_floating_point else 7)

        fn = lambda *a, **k: wrap(call(*a, **k))
        one = lambda s=shape: make_tensor(s, dtype, device)
        cases = [
            Sample("contiguous", pair, {"rtol": rtol}, call=fn, expects=expects),
            Sample("defaults", pair, call=fn, expects=expects),
            Sample("equal", lambda: (lambda x: (x, x.clone()))(one()), call=fn, expects=expects),
            Sample("noncontiguous-transposed", lambda: tuple(t.t() for t in pair()), {"rtol": rtol}, call=fn,
                   expects=expects),
            Sample("broadcast", lambda: (lambda x: (x, x[:1]))(one()), {"rtol": rtol}, call=fn, expects=expects),
            Sample("special-values", lambda: specials_pair(dtype, device), call=fn, expects=expects),
            Sample("special-values-equal-nan", lambda: specials_pair(dtype, device), {"equal_nan": True}, call=fn,
                   expects=expects),
            Sample("zero-tolerance", pair, {"rtol": 0.0, "atol": 0.0}, call=fn, expects=expects),
            Sample("atol-only", lambda: pair(absolute=True), {"rtol": 0.0, "atol": atol}, call=fn, expects=expects),
            Sample("empty", lambda: (one((0, cols)),) * 2, call=fn, expects=expects),
            Sample("0d", lambda: (one(()), one(())), call=fn, expects=expects),
            Sample("dtype-mismatch-error", other_dtype, call=fn),
            Sample("negative-rtol-error", pair, {"rtol": -1.0}, call=fn),
            Sample("negative-atol-error", pair, {"atol": -1.0}, call=fn),
            Sample("broadcast-error", lambda: (one(), one((5,))), call=fn),
        ]
        if dtype != torch.bool:
            cases.append(Sample("far", far, call=fn, expects=expects))
        return cases

    return samples


SPECS = [
    OpSpec(
        name="isclose", family="pointwise", impls={"isclose": isclose}, call=torch.isclose,
        samples=closeness_samples(torch.isclose, "isclose"), dtypes=ALL, tolerance="exact",
        perf=pointwise_perf(2),
        # CompositeImplicitAutograd in ATen (several kernels); one gems kernel above the decomposition. A bool
        # result has no gradient, so no backward is needed.
        autograd_enabled=("isclose",),
    ),
]
