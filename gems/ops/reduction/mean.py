"""mean: ``mean``, ``mean.dim`` and their ``out=`` forms: the sum (in fp32 for fp16/bf16/fp32, fp64 for
fp64) divided by the number of elements, correctly rounded, by the shared reduction kernel
(gems/ops/reduction/combine.py). ATen refuses integer and bool results; an empty mean is NaN."""

from __future__ import annotations

import torch

from gems.dtypes import FLOATS
from gems.ops.reduction.combine import POST_MEAN, SUM, Kind, reduce
from gems.ops.reduction.planning import TL_DTYPES, reduction_perf
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, lazy

_MEAN = Kind(SUM, post=POST_MEAN)


def _mean(x, dim, keepdim, dtype, out):
    if dtype is not None and not dtype.is_floating_point:
        raise RuntimeError(f"mean(): could not infer output dtype. Optional dtype must be either a floating point "
                           f"or complex dtype. Got: {dtype}")
    if dtype is None and not x.dtype.is_floating_point:
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either a floating point or "
                           f"complex dtype. Got: {x.dtype}")
    if out is not None:
        if dtype is not None and out.dtype != dtype:
            raise RuntimeError(f"Expected out tensor to have dtype {dtype}, but got {out.dtype} instead")
        if not out.dtype.is_floating_point:
            raise RuntimeError(f"result type {x.dtype} can't be cast to the desired output type {out.dtype}")
    result = dtype or (out.dtype if out is not None else x.dtype)
    if x.dtype not in TL_DTYPES or result not in TL_DTYPES:
        raise Fallback(f"mean of {x.dtype} to {result} is not handled by gems")
    (y,) = reduce(x, dim, keepdim, _MEAN, result, outs=None if out is None else [out])
    return y


def mean(self, *, dtype=None):
    return _mean(self, None, False, dtype, None)


def mean_dim(self, dim, keepdim=False, *, dtype=None):
    return _mean(self, dim, keepdim, dtype, None)


def mean_out(self, dim, keepdim=False, *, dtype=None, out):
    return _mean(self, dim, keepdim, dtype, out)


def mean_dtype_out(self, *, dtype=None, out):
    return _mean(self, None, False, dtype, out)


SPECS = [
    OpSpec(
        name="mean", family="reduction",
        impls={"mean": mean, "mean.dim": mean_dim, "mean.out": mean_out, "mean.dtype_out": mean_dtype_out},
        call=torch.mean,
        samples=lazy("gems.testing.samples_reduction", "reduction_samples", torch.mean, full="mean", dim="mean.dim",
                     out="mean.out", full_out=("mean.dtype_out", torch.ops.aten.mean.dtype_out), dtype_arg=True),
        dtypes=FLOATS,
        tolerance="reduction",
        perf=reduction_perf(),
        known_failures={("nvidia", "float32", "wrong-out-dtype-mean.out"):
                        "ATen's CUDA kernel writes an integer out= (it casts the input to the out's dtype first); "
                        "gems raises ATen's CPU error, that the float mean cannot be cast to it"},
    ),
]
