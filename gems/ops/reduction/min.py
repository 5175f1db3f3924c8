"""min: ``min`` (the whole tensor's minimum, as amin), ``min.dim`` (values and the first index of the
minimum along a dim, as argmin), and their ``out=`` forms ``min.unary_out`` and ``min.dim_min``
(gems/ops/reduction/combine.py and arg_reduce.py). NaN wins, as in ATen; an empty reduction raises."""

from __future__ import annotations

import torch

from gems.dtypes import ALL
from gems.ops.reduction.arg_reduce import arg_reduce
from gems.ops.reduction.combine import MIN, reduce_extreme
from gems.ops.reduction.planning import reduction_perf
from gems.spec import OpSpec, lazy


def min_all(self):
    return reduce_extreme(self, None, False, MIN, "min")[0]


def min_unary_out(self, *, out):
    return reduce_extreme(self, None, False, MIN, "min", out=out)[0]


def min_dim(self, dim, keepdim=False):
    return arg_reduce(self, dim, keepdim, False, "min")


def min_dim_min(self, dim, keepdim=False, *, min, min_indices):
    return arg_reduce(self, dim, keepdim, False, "min", values=min, indices=min_indices)


SPECS = [
    OpSpec(
        name="min", family="reduction",
        impls={"min": min_all, "min.dim": min_dim, "min.unary_out": min_unary_out, "min.dim_min": min_dim_min},
        call=torch.min,
        samples=lazy("gems.testing.samples_reduction", "values_indices_samples", "min"),
        dtypes=ALL,
        tolerance="exact",
        perf=reduction_perf(),
    ),
]
