"""all: ``all``, ``all.dim``, ``all.dims`` and their ``out=`` forms: whether every element is nonzero (NaN
counts as nonzero), by the shared reduction kernel (gems/ops/reduction/combine.py). As in ATen the
result is uint8 for a uint8 input and bool otherwise; an empty all is True."""

from __future__ import annotations

import torch

from gems.dtypes import ALL
from gems.ops.reduction.combine import MIN, PRE_NONZERO, Kind, reduce
from gems.ops.reduction.planning import TL_DTYPES, reduction_perf
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, lazy

_KIND = Kind(MIN, PRE_NONZERO)


def _all(x, dim, keepdim, out):
    if x.dtype not in TL_DTYPES:
        raise Fallback(f"all of {x.dtype} is not handled by gems")
    if out is not None and out.dtype not in (torch.bool, torch.uint8):
        raise RuntimeError(f"all only supports bool tensor for result, got: {out.dtype}")
    result = out.dtype if out is not None else torch.uint8 if x.dtype == torch.uint8 else torch.bool
    # all.dims / any.dims with an empty list reduce no dim (unlike sum's []).
    reduced = () if dim is not None and not isinstance(dim, int) and len(dim) == 0 else None
    (y,) = reduce(x, dim, keepdim, _KIND, result, cast=x.dtype, acc=torch.int32,
                  outs=None if out is None else [out], reduced=reduced)
    return y


def all_all(self):
    return _all(self, None, False, None)


def all_dim(self, dim, keepdim=False):
    return _all(self, dim, keepdim, None)


def all_dims(self, dim=None, keepdim=False):
    return _all(self, dim, keepdim, None)


def all_out(self, dim, keepdim=False, *, out):
    return _all(self, dim, keepdim, out)


def all_dims_out(self, dim=None, keepdim=False, *, out):
    return _all(self, dim, keepdim, out)


def all_all_out(self, *, out):
    return _all(self, None, False, out)


def _result_dtype(dtype):
    return torch.uint8 if dtype == torch.uint8 else torch.bool


SPECS = [
    OpSpec(
        name="all", family="reduction",
        impls={"all": all_all, "all.dim": all_dim, "all.dims": all_dims, "all.out": all_out,
               "all.dims_out": all_dims_out, "all.all_out": all_all_out},
        call=torch.all,
        samples=lazy("gems.testing.samples_reduction", "reduction_samples", torch.all, full="all", dim="all.dim",
                     dims="all.dims", out="all.out", full_out=("all.all_out", torch.ops.aten.all.all_out),
                     result_dtype=_result_dtype, zeros=0.03),
        dtypes=ALL,
        tolerance="exact",
        perf=reduction_perf(),
    ),
]
