"""max: ``max`` (the whole tensor's maximum, as amax), ``max.dim`` (values and the first index of the
maximum along a dim, as argmax), and their ``out=`` forms ``max.unary_out`` and ``max.dim_max``
(gems/ops/reduction/combine.py and arg_reduce.py). NaN wins, as in ATen; an empty reduction raises."""

from __future__ import annotations

import torch

from gems.dtypes import ALL
from gems.ops.reduction.arg_reduce import arg_reduce
from gems.ops.reduction.combine import MAX, reduce_extreme
from gems.ops.reduction.planning import reduction_perf
from gems.spec import OpSpec, lazy


def max_all(self):
    return reduce_extreme(self, None, False, MAX, "max")[0]


def max_unary_out(self, *, out):
    return reduce_extreme(self, None, False, MAX, "max", out=out)[0]


def max_dim(self, dim, keepdim=False):
    return arg_reduce(self, dim, keepdim, True, "max")


def max_dim_max(self, dim, keepdim=False, *, max, max_values):
    return arg_reduce(self, dim, keepdim, True, "max", values=max, indices=max_values)


SPECS = [
    OpSpec(
        name="max", family="reduction",
        impls={"max": max_all, "max.dim": max_dim, "max.unary_out": max_unary_out, "max.dim_max": max_dim_max},
        call=torch.max,
        samples=lazy("gems.testing.samples_reduction", "values_indices_samples", "max"),
        dtypes=ALL,
        tolerance="exact",
        perf=reduction_perf(),
    ),
]
