"""count_nonzero: ``count_nonzero`` (one dim or all), ``count_nonzero.dim_IntList`` and their ``out=``
forms: the number of nonzero elements (NaN counts) as int64, by the shared reduction kernel
(gems/ops/reduction/combine.py). The operator has no keepdim."""

from __future__ import annotations

import torch

from gems.dtypes import ALL
from gems.ops.reduction.combine import PRE_NONZERO, SUM, Kind, reduce
from gems.ops.reduction.planning import TL_DTYPES, reduction_perf
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, lazy

_KIND = Kind(SUM, PRE_NONZERO)


def _count(x, dim, out):
    if x.dtype not in TL_DTYPES:
        raise Fallback(f"count_nonzero of {x.dtype} is not handled by gems")
    if out is not None and out.dtype != torch.int64:
        raise Fallback(f"count_nonzero into {out.dtype}: left to ATen")
    (y,) = reduce(x, dim, False, _KIND, torch.int64, cast=x.dtype, outs=None if out is None else [out])
    return y


def count_nonzero(self, dim=None):
    return _count(self, dim, None)


def count_nonzero_dims(self, dim):
    return _count(self, dim, None)


def count_nonzero_out(self, dim=None, *, out):
    return _count(self, dim, out)


def count_nonzero_dims_out(self, dim, *, out):
    return _count(self, dim, out)


def _result_dtype(dtype):
    return torch.int64


SPECS = [
    OpSpec(
        name="count_nonzero", family="reduction",
        impls={"count_nonzero": count_nonzero, "count_nonzero.dim_IntList": count_nonzero_dims,
               "count_nonzero.out": count_nonzero_out, "count_nonzero.dim_IntList_out": count_nonzero_dims_out},
        call=torch.count_nonzero,
        samples=lazy("gems.testing.samples_reduction", "reduction_samples", torch.count_nonzero,
                     full="count_nonzero", dim="count_nonzero", dims="count_nonzero.dim_IntList",
                     result_dtype=_result_dtype, keepdim=False, none_dim=False, zeros=0.5),
        dtypes=ALL,
        tolerance="exact",
        perf=reduction_perf(),
    ),
]
