"""resolve_neg: returns its input itself when it has no negative bit, as ATen does. A real tensor can
carry the negative bit (the imaginary part of a conjugated complex tensor, ``torch._neg_view``):
resolve_neg then materializes it with the neg kernel, which reads the stored, not yet negated, values."""

import torch

from gems.dtypes import ALL
from gems.ops.pointwise.neg import neg_op
from gems.ops.pointwise.shared import pointwise_perf
from gems.ops.tensor.resolve_conj import returns_self
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, lazy


def resolve_neg(self):
    if not self.is_neg():
        return self
    if self.dtype == torch.bool:
        raise Fallback("negative bit on a bool tensor")
    return neg_op(self)  # complex dtypes raise Fallback there, before any work


def _resolved(view):
    """A call resolving ``view(x)``: the values and whether the result still has the negative bit (a
    view returned as it is would read the same values)."""

    def call(x):
        result = torch.resolve_neg(view(x))
        return result, torch.tensor(result.is_neg())

    return call


def _more_samples(dtype, device, quick):
    from gems.spec import Sample
    from gems.testing.samples import make_tensor, shape_for

    one = lambda s=(3, 4): lambda: (make_tensor(s, dtype, device),)
    cases = [Sample("returns-self", one(), call=returns_self(torch.resolve_neg))]
    if dtype != torch.bool:
        cases += [
            Sample("neg-view", one(shape_for(quick)), call=_resolved(torch._neg_view)),
            Sample("neg-view-transposed", one(shape_for(quick)), call=_resolved(lambda x: torch._neg_view(x.t()))),
        ]
    if dtype in (torch.float32, torch.float64):  # complex32 is experimental in torch
        # The imaginary part of a conjugated complex tensor is a real tensor with the negative bit.
        cases.append(Sample("imag-of-conj", one(), call=_resolved(lambda x: torch.complex(x, x).conj().imag)))
    return cases


SPECS = [
    OpSpec(
        name="resolve_neg", family="tensor", impls={"resolve_neg": resolve_neg}, call=torch.resolve_neg,
        samples=lazy("gems.testing.samples", "unary_samples", grad=True, subnormals=False, more=_more_samples),
        dtypes=ALL, tolerance="exact", perf=pointwise_perf(1),
    ),
]
