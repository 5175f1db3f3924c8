"""topk: ``topk`` and its ``out=`` form ``topk.values`` (torch.topk, Tensor.topk).

The k largest (or smallest) along a dim, largest first (smallest first), NaN counted as the largest
value, as in ATen. Rows of up to bitonic.SINGLE_MAX elements run the bitonic top-k in one program per
row (log k full stages, then log(n/k) halving steps, no full sort); longer rows, and 64-bit keys, sort
the whole row and keep the first k. Results are always sorted (``sorted=False`` allows any order, so
sorted is one of them); equal values come smaller index first.
"""

from __future__ import annotations

import torch

from gems.checks import check_out
from gems.dtypes import NUMERIC
from gems.ops.reduction.planning import wrap_dim
from gems.ops.sorting.bitonic import run_sort
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, PerfSpec, lazy


def _shape(x, dim, k):
    shape = list(x.shape)
    if shape:
        shape[dim] = k
    return shape


def _checked(x, k, dim):
    if x.dtype == torch.bool:
        raise Fallback("topk of bool: ATen refuses it on some devices and computes it on others")
    dim = wrap_dim(dim, x.dim())
    n = x.shape[dim] if x.dim() else 1
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    return dim


# --------------------------------------------------------------------------- ATen overloads


def topk(self, k, dim=-1, largest=True, sorted=True):
    dim = _checked(self, k, dim)
    values = torch.empty(_shape(self, dim, k), dtype=self.dtype, device=self.device)
    indices = torch.empty(_shape(self, dim, k), dtype=torch.int64, device=self.device)
    run_sort(self, dim, largest, k, values, indices)
    return values, indices


def topk_values(self, k, dim=-1, largest=True, sorted=True, *, values, indices):
    dim = _checked(self, k, dim)
    check_out(values, self)
    check_out(indices, self, torch.int64)
    shape = _shape(self, dim, k)
    for t in (values, indices):
        if list(t.shape) != shape:
            t.resize_(shape)
    run_sort(self, dim, largest, k, values, indices)
    return values, indices


SPECS = [
    OpSpec(
        name="topk", family="sort",
        impls={"topk": topk, "topk.values": topk_values},
        call=torch.topk,
        samples=lazy("gems.testing.samples_sort", "topk_samples"),
        dtypes=NUMERIC,
        tolerance="exact",
        perf=PerfSpec(inputs=lazy("gems.testing.samples_sort", "topk_perf_inputs", 64), shapes="topk",
                      bytes=lazy("gems.testing.samples_sort", "io_bytes")),
    ),
]
