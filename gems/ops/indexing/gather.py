"""gather: ``gather`` and ``gather.out``: out[i][j][k] = self[i][index[i][j][k]][k] (for dim 1; index
int32/int64, of self's rank, no larger than self but along ``dim``). Its backward, gather_backward, is a
composite of scatter_add (scatter_add.py; gather_backward.py declares it).

One launch of walk.py's gather over index's shape: rows of the last dim in tiles, the index read once
per element (once per row where it is broadcast along the last dim).
"""

from __future__ import annotations

import torch
import triton.language as tl  # noqa: F401  (kernel modules import it: the interpreter needs it)

from gems.dtypes import ALL
from gems.ops.indexing.shared import check_gather_scatter, check_no_overlap_with, cuda_asserts, prepare_out
from gems.ops.indexing.walk import along
from gems.ops.indexing.walk import gather as gather_kernel
from gems.ops.reduction.planning import wrap_dim
from gems.spec import OpSpec, lazy_perf

# --------------------------------------------------------------------------- ATen overloads


def _gather(self, dim, index, out=None):
    dim = wrap_dim(dim, self.dim())
    if out is not None:
        prepare_out(out, self, index.shape)
        check_no_overlap_with(out, self, index)
    check_gather_scatter("gather", self, dim, index)
    if out is None:
        out = torch.empty(index.shape, dtype=self.dtype, device=self.device)
    src_strides, indices = along(index, dim)(self)
    return gather_kernel(self, src_strides, out, indices)


def gather(self, dim, index, *, sparse_grad=False):
    return _gather(self, dim, index)


def gather_out(self, dim, index, *, sparse_grad=False, out):
    return _gather(self, dim, index, out)


# --------------------------------------------------------------------------- samples


def _samples(dtype, device, quick):
    from gems.testing.samples_indexing import gather_samples

    return gather_samples(dtype, device, quick)


SPECS = [
    OpSpec(
        name="gather", family="indexing", impls={"gather": gather, "gather.out": gather_out},
        call=torch.gather, samples=_samples, dtypes=ALL,
        perf=lazy_perf("gems.testing.samples_indexing", "elementwise_perf", "gather", shapes="index_elements"),
        skips=cuda_asserts("error-index-out-of-range", "error-index-negative"),
        varies_between_runs={"grad": "gather's backward adds into equal indices with scatter_add's float "
                                     "atomics, whose order varies from run to run on a GPU (as ATen's)"},
    ),
]
