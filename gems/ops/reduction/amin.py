"""amin: ``amin`` and ``amin.out`` (the minimum over some dims, or all when dim is []), by the shared
reduction kernel (gems/ops/reduction/combine.py). NaN propagates; no identity, so an empty reduction
raises as in ATen."""

from __future__ import annotations

import torch

from gems.dtypes import ALL
from gems.ops.reduction.combine import MIN, reduce_extreme
from gems.ops.reduction.planning import reduction_perf
from gems.spec import OpSpec, lazy


def amin(self, dim=(), keepdim=False):
    (y,) = reduce_extreme(self, dim, keepdim, MIN, "amin")
    return y


def amin_out(self, dim=(), keepdim=False, *, out):
    (y,) = reduce_extreme(self, dim, keepdim, MIN, "amin", out=out)
    return y


SPECS = [
    OpSpec(
        name="amin", family="reduction",
        impls={"amin": amin, "amin.out": amin_out},
        call=torch.amin,
        samples=lazy("gems.testing.samples_reduction", "reduction_samples", torch.amin, full="amin", dim="amin",
                     out="amin.out"),
        dtypes=ALL,
        tolerance="exact",
        perf=reduction_perf(),
    ),
]
