"""index_select: ``index_select`` and ``index_select.out``: self's slices along ``dim`` at ``index`` (a 0-d
or 1-d int32/int64 tensor), in index order. Its backward (index_select_backward, a composite) is
index_add_ (index_add.py); embedding (embedding.py) is this on dim 0.

One launch of walk.py's gather over the result, which reads each index once per row of its tile and
copies BLOCK_C consecutive elements of the slice per row: for a contiguous table indexed on dim 0 every
row is one coalesced, vectorized copy, and the table is never read beyond the selected rows. The
reference library measured 0.03x ATen on an H200 because it does the opposite: it first copies the
whole input with the indexed dim moved last (``permute(...).contiguous()``: every element of a 32000 x
4096 table read and written, transposed), then gathers along that now-contiguous dim one element per
index (each a separate, uncoalesced load), and permutes the result back with a second full copy;
three passes, two of them over all of self, where one pass over the selected rows suffices.
"""

from __future__ import annotations

import torch
import triton.language as tl  # noqa: F401  (kernel modules import it: the interpreter needs it)

from gems.dtypes import ALL, ATEN_NAMES
from gems.ops.indexing.shared import (
    check_device,
    check_no_overlap_with,
    check_values,
    cuda_asserts,
    out_of_range,
    prepare_out,
)
from gems.ops.indexing.walk import Indices, gather
from gems.ops.reduction.planning import wrap_dim
from gems.spec import OpSpec, lazy_perf

# --------------------------------------------------------------------------- ATen overloads


def select_rows(self, dim, index, out=None):
    """index_select's checks and launch; ``dim`` already wrapped. Shared with embedding."""
    # ATen's CPU and CUDA kernels refuse these with different exceptions; an accelerator follows CUDA's.
    on_cpu = self.device.type == "cpu"
    if index.dim() > 1:
        if on_cpu:
            raise IndexError("index_select(): Index is supposed to be a vector")
        raise RuntimeError("Index is supposed to be an empty tensor or a vector")
    if index.dtype not in (torch.int64, torch.int32):
        if on_cpu:
            raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
        raise NotImplementedError(f'"index_select_out_cuda_impl" not implemented for '
                                  f"'{ATEN_NAMES.get(index.dtype, index.dtype)}'")
    check_device(self, index)
    ndim, n = self.dim(), index.numel()
    if ndim == 0 and n != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {n} value(s)")
    size = self.shape[dim] if ndim else 1
    if size == 0 and n:
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    shape = list(self.shape)
    if ndim:
        shape[dim] = n
    if out is None:
        out = torch.empty(shape, dtype=self.dtype, device=self.device)
    else:
        if out.dtype != self.dtype:
            raise RuntimeError("index_select(): self and result must have the same scalar type")
        check_no_overlap_with(out, self, index)
        prepare_out(out, self, shape)
    # ATen's CPU kernel raises RuntimeError on its dim-1 fast path (and for an empty self), IndexError elsewhere.
    if ndim > 1 and (self.numel() == 0 or (dim == 1 and out.is_contiguous())):
        check_values(index, size, lambda v: RuntimeError(f"INDICES element is out of DATA bounds, id={v} "
                                                         f"axis_dim={size}"))
    check_values(index, size, out_of_range)
    src_strides, index_strides = list(self.stride()), [0] * ndim
    if ndim:
        src_strides[dim] = 0
        index_strides[dim] = index.stride(0) if index.dim() else 0
    step = self.stride(dim) if ndim else 0
    return gather(self, src_strides, out, Indices((index,), index_strides, ((size, step),)))


def index_select(self, dim, index):
    return select_rows(self, wrap_dim(dim, self.dim()), index)


def index_select_out(self, dim, index, *, out):
    return select_rows(self, wrap_dim(dim, self.dim()), index, out)


# --------------------------------------------------------------------------- samples


def _samples(dtype, device, quick):
    from gems.testing.samples_indexing import index_select_samples

    return index_select_samples(dtype, device, quick)


SPECS = [
    OpSpec(
        name="index_select", family="indexing",
        impls={"index_select": index_select, "index_select.out": index_select_out},
        call=torch.index_select, samples=_samples, dtypes=ALL,
        perf=lazy_perf("gems.testing.samples_indexing", "rows_perf", "index_select", shapes="index_rows"),
        skips=cuda_asserts("error-index-out-of-range", "error-index-negative", "error-index-out-of-range-3d"),
        varies_between_runs={"grad": "index_select's backward is index_add: float atomics add equal indices' rows in "
                                     "the order they land (as in ATen's CUDA kernel)"},
    ),
]
