"""isinf, isnan, isfinite (bool results) and resolve_conj, resolve_neg.

resolve_conj and resolve_neg return their input itself when there is nothing to resolve, as ATen
does (``torch.resolve_conj(x) is x`` for every real tensor). A real tensor can carry the negative
bit (the imaginary part of a conjugated complex tensor, ``torch._neg_view``): resolve_neg then
materializes it with the neg kernel, which reads the stored, not yet negated, values.
A complex conjugate view is left to ATen.
"""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import PointwiseOp, Promotion
from gems.ops.unary_math import FLOATS, INTS_AND_BOOL, neg_op
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, Sample
from gems.testing.perf_inputs import pointwise_perf
from gems.testing.samples import REJECT_HOST_DTYPE, make_tensor, shape_for, unary_samples

INF = tl.constexpr(float("inf"))


@triton.jit
def _isnan(x):
    return x != x  # false for every integer and bool


# Static if/else with one return: see unary_math.div_rn for why there is no early return.


@triton.jit
def _isinf(x):
    if x.dtype.is_floating():
        result = tl.abs(x) == INF
    else:
        result = x != x  # integers and bool are never infinite
    return result


@triton.jit
def _isfinite(x):
    if x.dtype.is_floating():
        result = tl.abs(x) < INF  # false for NaN too
    else:
        result = x == x
    return result


isnan_op = PointwiseOp("isnan", _isnan, operands=1, promotion=Promotion.BOOL)
isinf_op = PointwiseOp("isinf", _isinf, operands=1, promotion=Promotion.BOOL)
isfinite_op = PointwiseOp("isfinite", _isfinite, operands=1, promotion=Promotion.BOOL)


def isnan_out(self, *, out):
    return isnan_op(self, out=out)


def isinf_out(self, *, out):
    return isinf_op(self, out=out)


def resolve_conj(self):
    if self.is_conj():
        raise Fallback("materializing a complex conjugate view")
    return self


def resolve_neg(self):
    if not self.is_neg():
        return self
    if self.dtype == torch.bool:
        raise Fallback("negative bit on a bool tensor")
    return neg_op(self)  # complex dtypes raise Fallback there, before any work


# --------------------------------------------------------------------------- declarations


def _bool_out(fn):
    """torch.isnan / torch.isinf have no ``out=``; their overloads do."""

    def call(x):
        return fn(x, out=torch.empty(0, dtype=torch.bool, device=x.device))

    return call


def _returns_self(fn):
    """A bool: whether ``fn(x)`` is ``x`` itself (ATen's result for a tensor with nothing to resolve)."""

    def call(x):
        return torch.tensor(fn(x) is x)

    return call


def _resolve_conj_samples(dtype, device, quick):
    cases = [Sample("returns-self", (make_tensor((3, 4), dtype, device),), call=_returns_self(torch.resolve_conj))]
    if dtype == REJECT_HOST_DTYPE:
        # A conjugated complex tensor: ATen materializes it (compared through its real view).
        cases.append(Sample("complex-conj-view", (make_tensor((3, 4), dtype, device),),
                            call=lambda x: torch.view_as_real(torch.resolve_conj(torch.complex(x, -x).conj()))))
    return cases


def _resolved(view):
    """A call resolving ``view(x)``: the values and whether the result still has the negative bit (a
    view returned as it is would read the same values)."""

    def call(x):
        result = torch.resolve_neg(view(x))
        return result, torch.tensor(result.is_neg())

    return call


def _resolve_neg_samples(dtype, device, quick):
    cases = [Sample("returns-self", (make_tensor((3, 4), dtype, device),), call=_returns_self(torch.resolve_neg))]
    if dtype != torch.bool:
        shape = shape_for(quick)
        cases += [
            Sample("neg-view", (make_tensor(shape, dtype, device),), call=_resolved(torch._neg_view)),
            Sample("neg-view-transposed", (make_tensor(shape, dtype, device),),
                   call=_resolved(lambda x: torch._neg_view(x.t()))),
        ]
    if dtype in (torch.float32, torch.float64):  # complex32 is experimental in torch
        # The imaginary part of a conjugated complex tensor is a real tensor with the negative bit.
        cases.append(Sample("imag-of-conj", (make_tensor((3, 4), dtype, device),),
                            call=_resolved(lambda x: torch.complex(x, x).conj().imag)))
    return cases


ALL_DTYPES = FLOATS + INTS_AND_BOOL

# Variants whose input has no bit to resolve: the result is the input itself, no kernel runs (as in ATen).
_RETURNS_SELF = {variant: "nothing to resolve: the input itself is the result" for variant in (
    "contiguous", "noncontiguous-transposed", "noncontiguous-strided", "0d", "3d", "special-values", "grad",
    "returns-self")}

SPECS = [
    OpSpec(
        name="isnan", family="pointwise", impls={"isnan": isnan_op, "isnan.out": isnan_out}, call=torch.isnan,
        samples=unary_samples(out=("isnan.out", _bool_out(torch.ops.aten.isnan.out))), dtypes=ALL_DTYPES,
        tolerance="exact", perf=pointwise_perf(1),
    ),
    OpSpec(
        name="isinf", family="pointwise", impls={"isinf": isinf_op, "isinf.out": isinf_out}, call=torch.isinf,
        samples=unary_samples(out=("isinf.out", _bool_out(torch.ops.aten.isinf.out))), dtypes=ALL_DTYPES,
        tolerance="exact", perf=pointwise_perf(1),
    ),
    OpSpec(
        name="isfinite", family="pointwise", impls={"isfinite": isfinite_op}, call=torch.isfinite,
        samples=unary_samples(), dtypes=ALL_DTYPES, tolerance="exact", perf=pointwise_perf(1),
    ),
    OpSpec(
        name="resolve_conj", family="tensor", impls={"resolve_conj": resolve_conj}, call=torch.resolve_conj,
        samples=unary_samples(grad=True, subnormals=False, more=_resolve_conj_samples), dtypes=ALL_DTYPES,
        tolerance="exact", perf=pointwise_perf(1),
        deliberate_fallbacks={"complex-conj-view": "complex dtypes are left to ATen"}, no_launch=_RETURNS_SELF,
    ),
    OpSpec(
        name="resolve_neg", family="tensor", impls={"resolve_neg": resolve_neg}, call=torch.resolve_neg,
        samples=unary_samples(grad=True, subnormals=False, more=_resolve_neg_samples), dtypes=ALL_DTYPES,
        tolerance="exact", perf=pointwise_perf(1), no_launch=_RETURNS_SELF,
    ),
]
