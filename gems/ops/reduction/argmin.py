"""argmin: ``argmin`` and ``argmin.out``: the first index of the minimum along a dim, or in the flattened
tensor (dim None); the first NaN when there is one (gems/ops/reduction/arg_reduce.py). ATen refuses bool
input and an empty reduction."""

from __future__ import annotations

import torch

from gems.dtypes import NUMERIC
from gems.ops.reduction.arg_reduce import arg_reduce
from gems.ops.reduction.planning import reduction_perf
from gems.spec import OpSpec, lazy


def _check(x):
    if x.dtype == torch.bool:
        raise RuntimeError("argmin(): does not support bool input")


def argmin(self, dim=None, keepdim=False):
    _check(self)
    return arg_reduce(self, dim, keepdim, False, "argmin", want_values=False)[1]


def argmin_out(self, dim=None, keepdim=False, *, out):
    _check(self)
    return arg_reduce(self, dim, keepdim, False, "argmin", want_values=False, indices=out)[1]


def _index_dtype(dtype):
    return torch.int64


SPECS = [
    OpSpec(
        name="argmin", family="reduction",
        impls={"argmin": argmin, "argmin.out": argmin_out},
        call=torch.argmin,
        samples=lazy("gems.testing.samples_reduction", "reduction_samples", torch.argmin, full="argmin",
                     dim="argmin", out="argmin.out", result_dtype=_index_dtype, single_dim=True),
        dtypes=NUMERIC + (torch.bool,),
        tolerance="exact",
        perf=reduction_perf(),
    ),
]
