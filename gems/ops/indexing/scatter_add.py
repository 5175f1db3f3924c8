"""scatter_add: ``scatter_add``, ``scatter_add_`` and ``scatter_add.out``: self[i][index[i][j][k]][k] +=
src[i][j][k] (for dim 1), equal indices adding up. gather's backward (gather_backward) reaches it.

scatter.py's walk with atomic adds into the result (walk.accumulate: an fp32 scratch for fp16/bf16, int64
for 8/16-bit integers and bool); equal indices add in no fixed order on a GPU, as in ATen's CUDA kernel.
"""

from __future__ import annotations

import torch
import triton.language as tl  # noqa: F401  (kernel modules import it: the interpreter needs it)

from gems.dtypes import ALL
from gems.ops.indexing.scatter import scatter_into
from gems.ops.indexing.shared import cuda_asserts, prepare_out
from gems.ops.indexing.walk import ADD
from gems.spec import OpSpec, lazy_perf


def scatter_add(self, dim, index, src):
    return scatter_into("scatter", self, dim, index, src, None, ADD, torch.empty_like(self))


def scatter_add_(self, dim, index, src):
    return scatter_into("scatter", self, dim, index, src, None, ADD, self)


def scatter_add_out(self, dim, index, src, *, out):
    return scatter_into("scatter", self, dim, index, src, None, ADD, prepare_out(out, self, self.shape))


def _samples(dtype, device, quick):
    from gems.testing.samples_indexing import scatter_add_samples

    return scatter_add_samples(dtype, device, quick)


SPECS = [
    OpSpec(
        name="scatter_add", family="indexing",
        impls={"scatter_add": scatter_add, "scatter_add_": scatter_add_, "scatter_add.out": scatter_add_out},
        call=torch.scatter_add, samples=_samples, dtypes=ALL,
        perf=lazy_perf("gems.testing.samples_indexing", "elementwise_perf", "scatter_add", shapes="index_elements"),
        skips=cuda_asserts("error-index-out-of-range", "error-index-negative"),
        varies_between_runs={"*": "equal indices add in the order their atomics land (as in ATen's CUDA kernel)"},
    ),
]
