"""scatter_reduce: ``scatter_reduce.two``, ``scatter_reduce.two_out`` and ``scatter_reduce_.two``: src
reduced into self at index along ``dim`` by "sum", "prod", "mean", "amax" or "amin"; with
``include_self=False`` the places written start from the reduction's identity instead of self's value
(a place nothing is written to keeps self's). Integer means are floored, as ATen's.

scatter.py's walk with atomics (walk.accumulate): into the result for sum/prod/amax/amin of fp32, fp64,
int32 and int64 when self takes part; otherwise into a scratch of the accumulation dtype, with a count
per place for "mean" and include_self=False, which one pointwise pass combines with self. Products
multiply by compare-and-swap. Equal indices combine in no fixed order on a GPU, as in ATen's CUDA kernel.
"""

from __future__ import annotations

import torch
import triton.language as tl  # noqa: F401  (kernel modules import it: the interpreter needs it)

from gems.dtypes import ALL
from gems.ops.indexing.scatter import scatter_into
from gems.ops.indexing.shared import cuda_asserts, prepare_out
from gems.ops.indexing.walk import ADD, MAX, MIN, MUL
from gems.spec import OpSpec, lazy_perf

REDUCTIONS = {"sum": ADD, "prod": MUL, "mean": "mean", "amax": MAX, "amin": MIN}

# --------------------------------------------------------------------------- ATen overloads


def _reduce(self, dim, index, src, reduce, include_self, out):
    if reduce not in REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    if reduce == "mean" and self.dtype is torch.bool:
        raise NotImplementedError('"scatter_gather_tensor_cpu_reduce_mean" not implemented for \'Bool\'')
    return scatter_into("scatter", self, dim, index, src, None, REDUCTIONS[reduce], out, bool(include_self))


def scatter_reduce(self, dim, index, src, reduce, *, include_self=True):
    return _reduce(self, dim, index, src, reduce, include_self, torch.empty_like(self))


def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    return _reduce(self, dim, index, src, reduce, include_self, self)


def scatter_reduce_out(self, dim, index, src, reduce, *, include_self=True, out):
    return _reduce(self, dim, index, src, reduce, include_self, prepare_out(out, self, self.shape))


# --------------------------------------------------------------------------- samples


def _samples(dtype, device, quick):
    from gems.testing.samples_indexing import scatter_reduce_samples

    return scatter_reduce_samples(dtype, device, quick)


SPECS = [
    OpSpec(
        name="scatter_reduce", family="indexing",
        impls={"scatter_reduce.two": scatter_reduce, "scatter_reduce_.two": scatter_reduce_,
               "scatter_reduce.two_out": scatter_reduce_out},
        call=torch.scatter_reduce, samples=_samples, dtypes=ALL,
        perf=lazy_perf("gems.testing.samples_indexing", "elementwise_perf", "scatter_reduce", shapes="index_elements"),
        skips=cuda_asserts("error-index-out-of-range"),
        varies_between_runs={"*": "equal indices combine in the order their atomics land (as in ATen's CUDA kernel)"},
    ),
]
