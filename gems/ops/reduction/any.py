"""any: ``any``, ``any.dim``, ``any.dims`` and their ``out=`` forms: whether some element is nonzero (NaN
counts as nonzero), by the shared reduction kernel (gems/ops/reduction/combine.py). As in ATen the
result is uint8 for a uint8 input and bool otherwise; an empty any is False."""

from __future__ import annotations

import torch

from gems.dtypes import ALL
from gems.ops.reduction.combine import MAX, PRE_NONZERO, Kind, reduce
from gems.ops.reduction.planning import TL_DTYPES, reduction_perf
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, lazy

_KIND = Kind(MAX, PRE_NONZERO)


def _any(x, dim, keepdim, out):
    if x.dtype not in TL_DTYPES:
        raise Fallback(f"any of {x.dtype} is not handled by gems")
    if out is not None and out.dtype not in (torch.bool, torch.uint8):
        raise RuntimeError(f"any only supports bool tensor for result, got: {out.dtype}")
    result = out.dtype if out is not None else torch.uint8 if x.dtype == torch.uint8 else torch.bool
    # all.dims / any.dims with an empty list reduce no dim (unlike sum's []).
    reduced = () if dim is not None and not isinstance(dim, int) and len(dim) == 0 else None
    (y,) = reduce(x, dim, keepdim, _KIND, result, cast=x.dtype, acc=torch.int32,
                  outs=None if out is None else [out], reduced=reduced)
    return y


def any_all(self):
    return _any(self, None, False, None)


def any_dim(self, dim, keepdim=False):
    return _any(self, dim, keepdim, None)


def any_dims(self, dim=None, keepdim=False):
    return _any(self, dim, keepdim, None)


def any_out(self, dim, keepdim=False, *, out):
    return _any(self, dim, keepdim, out)


def any_dims_out(self, dim=None, keepdim=False, *, out):
    return _any(self, dim, keepdim, out)


def any_all_out(self, *, out):
    return _any(self, None, False, out)


def _result_dtype(dtype):
    return torch.uint8 if dtype == torch.uint8 else torch.bool


SPECS = [
    OpSpec(
        name="any", family="reduction",
        impls={"any": any_all, "any.dim": any_dim, "any.dims": any_dims, "any.out": any_out,
               "any.dims_out": any_dims_out, "any.all_out": any_all_out},
        call=torch.any,
        samples=lazy("gems.testing.samples_reduction", "reduction_samples", torch.any, full="any", dim="any.dim",
                     dims="any.dims", out="any.out", full_out=("any.all_out", torch.ops.aten.any.all_out),
                     result_dtype=_result_dtype, zeros=0.9),
        dtypes=ALL,
        tolerance="exact",
        perf=reduction_perf(),
    ),
]
