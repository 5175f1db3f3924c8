"""index: ``index.Tensor`` and ``index.Tensor_out``, advanced indexing ``self[indices]`` (advanced.py):
several index tensors, None gaps, broadcasting index tensors, bool masks, negative indices. Its
backward is index_put with accumulate (index_put.py).

One launch of walk.py's gather over the result (after gems' nonzero for a mask): where the indexed dims
lead and the rows of the dims after them are contiguous (``table[ids]``), each index is read once per row
and each row is one coalesced copy, as in index_select. A lone mask over self's leading dims (``x[mask]``)
copies the kept rows in one launch after the count (masked_rows.py).
"""

from __future__ import annotations

import torch
import triton.language as tl  # noqa: F401  (kernel modules import it: the interpreter needs it)

from gems.dtypes import ALL
from gems.ops.indexing.advanced import plan
from gems.ops.indexing.masked_rows import masked_rows, rows_view
from gems.ops.indexing.shared import check_no_overlap_with, cuda_asserts, prepare_out
from gems.ops.indexing.walk import gather
from gems.spec import OpSpec, lazy_perf

# --------------------------------------------------------------------------- ATen overloads


def _lone_mask(indices):
    """The mask of ``self[mask]`` (a bool or uint8 tensor first, nothing indexed after it), else None."""
    mask = indices[0] if indices else None
    if mask is None or mask.dtype not in (torch.bool, torch.uint8) or any(t is not None for t in indices[1:]):
        return None
    return mask


def index(self, indices):
    mask = _lone_mask(indices)
    rows = None if mask is None else rows_view(self, mask)
    if rows is not None:
        return masked_rows(self, mask, rows)
    indexed = plan(self, indices)
    src_strides, where = indexed.layout(self)
    return gather(self, src_strides, torch.empty(indexed.shape, dtype=self.dtype, device=self.device), where)


def index_out(self, indices, *, out):
    indexed = plan(self, indices)
    prepare_out(out, self, indexed.shape)
    check_no_overlap_with(out, self)
    src_strides, where = indexed.layout(self)
    return gather(self, src_strides, out, where)


# --------------------------------------------------------------------------- samples


def _samples(dtype, device, quick):
    from gems.testing.samples_advanced_indexing import index_samples

    return index_samples(dtype, device, quick)


SPECS = [
    OpSpec(
        name="index", family="indexing", impls={"index.Tensor": index, "index.Tensor_out": index_out},
        call=torch.ops.aten.index.Tensor, samples=_samples, dtypes=ALL,
        perf=lazy_perf("gems.testing.samples_indexing", "rows_perf", "index", shapes="index_rows"),
        skips=cuda_asserts("error-index-out-of-range", "error-index-negative"),
        varies_between_runs={"grad": "index's backward is index_put with accumulate: float atomics add equal "
                                     "indices in an order that varies from run to run on a GPU (as ATen's)"},
    ),
]
