"""amax: ``amax`` and ``amax.out`` (the maximum over some dims, or all when dim is []), by the shared
reduction kernel (gems/ops/reduction/combine.py). NaN propagates; no identity, so an empty reduction
raises as in ATen."""

from __future__ import annotations

import torch

from gems.dtypes import ALL
from gems.ops.reduction.combine import MAX, reduce_extreme
from gems.ops.reduction.planning import reduction_perf
from gems.spec import OpSpec, lazy


def amax(self, dim=(), keepdim=False):
    (y,) = reduce_extreme(self, dim, keepdim, MAX, "amax")
    return y


def amax_out(self, dim=(), keepdim=False, *, out):
    (y,) = reduce_extreme(self, dim, keepdim, MAX, "amax", out=out)
    return y


SPECS = [
    OpSpec(
        name="amax", family="reduction",
        impls={"amax": amax, "amax.out": amax_out},
        call=torch.amax,
        samples=lazy("gems.testing.samples_reduction", "reduction_samples", torch.amax, full="amax", dim="amax",
                     out="amax.out"),
        dtypes=ALL,
        tolerance="exact",
        perf=reduction_perf(),
    ),
]
