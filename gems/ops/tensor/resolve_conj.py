"""resolve_conj: returns its input itself when there is nothing to resolve, as ATen does
(``torch.resolve_conj(x) is x`` for every real tensor). A complex conjugate view is left to ATen."""

import torch

from gems.dtypes import ALL
from gems.ops.pointwise.shared import pointwise_perf
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, lazy


def resolve_conj(self):
    if self.is_conj():
        raise Fallback("materializing a complex conjugate view")
    return self


def returns_self(fn):
    """A call giving a bool: whether ``fn(x)`` is ``x`` itself (ATen's result for a tensor with nothing
    to resolve)."""

    def call(x):
        return torch.tensor(fn(x) is x)

    return call


def _more_samples(dtype, device, quick):
    from gems.spec import Sample
    from gems.testing.samples import REJECT_HOST_DTYPE, make_tensor

    one = lambda: (make_tensor((3, 4), dtype, device),)
    cases = [Sample("returns-self", one, call=returns_self(torch.resolve_conj))]
    if dtype == REJECT_HOST_DTYPE:
        # A conjugated complex tensor: ATen materializes it (compared through its real view).
        cases.append(Sample("complex-conj-view", one,
                            call=lambda x: torch.view_as_real(torch.resolve_conj(torch.complex(x, -x).conj()))))
    return cases


SPECS = [
    OpSpec(
        name="resolve_conj", family="tensor", impls={"resolve_conj": resolve_conj}, call=torch.resolve_conj,
        samples=lazy("gems.testing.samples", "unary_samples", grad=True, subnormals=False, more=_more_samples),
        dtypes=ALL, tolerance="exact", perf=pointwise_perf(1),
        deliberate_fallbacks={"complex-conj-view": "complex dtypes are left to ATen"},
    ),
]
