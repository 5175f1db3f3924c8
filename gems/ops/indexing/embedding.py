"""embedding: ``embedding`` and ``embedding.out``: rows of a 2-d ``weight`` at ``indices`` (int32/int64, any
shape), a result of shape indices.shape + (weight.size(1),). padding_idx, scale_grad_by_freq and sparse
change only the backward, embedding_dense_backward (embedding_dense_backward.py).

index_select.py's row copy over the flattened indices: one launch, each index read once per row, each
row of the table one coalesced copy (the index_select docstring says why this is the fast layout).
"""

from __future__ import annotations

import torch
import triton.language as tl  # noqa: F401  (kernel modules import it: the interpreter needs it)

from gems.dtypes import ALL
from gems.ops.indexing.shared import check_device, check_values, cuda_asserts, out_of_range, prepare_out
from gems.ops.indexing.walk import Indices, gather
from gems.spec import OpSpec, lazy_perf

# --------------------------------------------------------------------------- ATen overloads


def _embedding(weight, indices, out=None):
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    if indices.dtype not in (torch.int64, torch.int32):
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {indices.type()} instead (while checking arguments for embedding)")
    check_device(weight, indices)
    shape = (*indices.shape, weight.shape[1])
    out = torch.empty(shape, dtype=weight.dtype, device=weight.device) if out is None else prepare_out(out, weight,
                                                                                                       shape)
    check_values(indices, weight.shape[0], out_of_range)
    if weight.shape[0] == 0 and indices.numel():
        raise IndexError("index out of range in self")
    ndim = indices.dim()
    src_strides = [0] * ndim + [weight.stride(1)]
    where = Indices((indices,), [*indices.stride(), 0], ((weight.shape[0], weight.stride(0)),))
    return gather(weight, src_strides, out, where)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    return _embedding(weight, indices)


def embedding_out(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False, *, out):
    return _embedding(weight, indices, out)


# --------------------------------------------------------------------------- samples


def _samples(dtype, device, quick):
    from gems.testing.samples_indexing import embedding_samples

    return embedding_samples(dtype, device, quick)


SPECS = [
    OpSpec(
        name="embedding", family="indexing", impls={"embedding": embedding, "embedding.out": embedding_out},
        call=torch.embedding, samples=_samples, dtypes=ALL,
        perf=lazy_perf("gems.testing.samples_indexing", "rows_perf", "embedding", shapes="index_rows"),
        skips=cuda_asserts("error-index-out-of-range", "error-index-negative"),
    ),
]
