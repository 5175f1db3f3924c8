"""var_mean: ``var_mean.correction``: the variance (divisor max(n - correction, 0)) and the mean over some
dims, both from one pass over the input (gems/ops/reduction/moments.py). ``torch.var_mean(x)`` and
``torch.var_mean(x, dim, unbiased)`` reach it through ATen's composite overloads."""

from __future__ import annotations

import torch

from gems.dtypes import FLOATS
from gems.ops.reduction.moments import moments
from gems.ops.reduction.planning import reduction_perf
from gems.spec import OpSpec, lazy


def var_mean_correction(self, dim=None, *, correction=None, keepdim=False):
    return moments(self, dim, correction, keepdim, want_mean=True)


SPECS = [
    OpSpec(
        name="var_mean", family="reduction",
        impls={"var_mean.correction": var_mean_correction},
        call=torch.var_mean,
        samples=lazy("gems.testing.samples_reduction", "moment_samples", torch.var_mean, "var_mean.correction"),
        dtypes=FLOATS,
        tolerance="reduction",
        perf=reduction_perf(),
    ),
]
