"""aminmax: ``aminmax`` and ``aminmax.out``: the minimum and the maximum in one pass over the input (the
shared reduction kernel's MINMAX combine, gems/ops/reduction/combine.py). NaN propagates to both; an
empty reduction raises as in ATen."""

from __future__ import annotations

import torch

from gems.dtypes import ALL
from gems.ops.reduction.combine import MINMAX, reduce_extreme
from gems.ops.reduction.planning import reduction_perf
from gems.spec import OpSpec


def _check_empty(x, dim):
    if dim is None and x.numel() == 0:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                           "identity.")


def aminmax(self, *, dim=None, keepdim=False):
    _check_empty(self, dim)
    return tuple(reduce_extreme(self, dim, keepdim, MINMAX, "aminmax"))


def aminmax_out(self, *, dim=None, keepdim=False, min, max):
    _check_empty(self, dim)
    return tuple(reduce_extreme(self, dim, keepdim, MINMAX, "aminmax", outs=[min, max]))


def aminmax_call(x, dim=None, **kwargs):
    """torch.aminmax with the reduction samples' positional dim (aminmax's dim is keyword-only)."""
    return torch.aminmax(x, dim=dim, **kwargs)


def _aminmax_out_call(x, dim=None, **kwargs):
    low, high = torch.empty(0, dtype=x.dtype, device=x.device), torch.empty(0, dtype=x.dtype, device=x.device)
    result = torch.aminmax(x, dim=dim, **kwargs, out=(low, high))
    if result[0].data_ptr() != low.data_ptr() or result[1].data_ptr() != high.data_ptr():
        raise AssertionError("an out= call must return its out tensors")
    return result


def _samples(dtype, device, quick):
    from gems.spec import Sample
    from gems.testing.samples import make_tensor, shape_for
    from gems.testing.samples_reduction import reduction_samples

    rows, cols = shape = shape_for(quick)
    cases = reduction_samples(aminmax_call, full="aminmax", dim="aminmax", single_dim=True)(dtype, device, quick)
    make = lambda s: make_tensor(s, dtype, device)
    return cases + [
        Sample("out", lambda: (make(shape), 1), expects="aminmax.out", call=_aminmax_out_call, reduction_size=cols),
        Sample("out-full", lambda: (make(shape),), expects="aminmax.out", call=_aminmax_out_call,
               reduction_size=rows * cols),
    ]


SPECS = [
    OpSpec(
        name="aminmax", family="reduction",
        impls={"aminmax": aminmax, "aminmax.out": aminmax_out},
        call=aminmax_call,
        samples=_samples,
        dtypes=ALL,
        tolerance="exact",
        perf=reduction_perf(),
    ),
]
