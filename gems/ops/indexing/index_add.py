"""index_add: ``index_add``, ``index_add_`` and ``index_add.out``: self with alpha * source's slices
along ``dim`` added at ``index`` (a 0-d or 1-d int32/int64 tensor); equal indices add up. index_select's
backward (index_select_backward, a composite) reaches index_add_.

walk.py's scatter over source, with atomics into the result where its dtype has them (fp32, fp64,
int32, int64), as ATen's CUDA kernel: equal indices add in no fixed order on a GPU, so float results may
differ in their last bits from call to call (as ATen's do). In the other dtypes (fp16, bf16, 8/16-bit
integers, bool) sums are taken in fp32 (int64), rounded once into the result: along dim 0 of a self whose
rows are views, by segments.py's sums of the indexed rows (one pass over the slices and the rows they
name: no scratch, no sort); otherwise in a scratch the size of self (walk.accumulate).
"""

from __future__ import annotations

import torch
import triton.language as tl  # noqa: F401  (kernel modules import it: the interpreter needs it)

from gems.dtypes import ALL
from gems.ops.indexing.segments import add_to_rows, as_rows
from gems.ops.indexing.shared import (
    check_device,
    check_no_overlap,
    check_no_overlap_with,
    check_values,
    cuda_asserts,
    out_of_bounds,
    prepare_out,
    scalar_of,
)
from gems.ops.indexing.walk import ADD, NATIVE_ATOMICS, Indices, accumulate, copy_op
from gems.ops.reduction.planning import wrap_dim
from gems.spec import OpSpec, lazy_perf

# --------------------------------------------------------------------------- ATen overloads


def _check(self, dim, index, source):
    if index.dim() > 1:
        raise IndexError(f"index_add_(): Index is supposed to be a vector, but got dim: {index.dim()} with type: "
                         f"{index.dtype} and size: {list(index.shape)}")
    if index.dtype not in (torch.int64, torch.int32):
        raise RuntimeError(f"index_add_(): Expected dtype int32/int64 for index but got: {index.dtype}")
    if self.dtype != source.dtype:
        raise RuntimeError(f"index_add_(): self ({self.dtype}) and source ({source.dtype}) must have the same "
                           "scalar type")
    check_device(self, index, source)
    n = index.numel()
    if n != (source.shape[dim] if source.dim() else 1):
        raise RuntimeError(f"index_add_(): Number of indices ({n}) should be equal to source.size(dim): "
                           f"({source.shape[dim] if source.dim() else 1}), for dim: {dim}")
    same_rank = source.dim() == self.dim() or (source.dim() <= 1 and self.dim() <= 1)
    if not same_rank or any(a != b for d, (a, b) in enumerate(zip(self.shape, source.shape)) if d != dim):
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the specified dimension. "
                           f"Got self.shape = {list(self.shape)} source.shape = {list(source.shape)}")
    size = self.shape[dim] if self.dim() else 1
    check_values(index, size, out_of_bounds(dim, size))
    return size


def add_slices(self, dim, index, source, alpha, out):
    """out = self + alpha * source's slices at ``index`` along ``dim`` (out may be self)."""
    dim = wrap_dim(dim, self.dim())
    size = _check(self, dim, index, source)
    alpha = scalar_of(alpha, self.dtype)
    index_strides = [0] * source.dim()
    if source.dim():
        index_strides[dim] = index.stride(0) if index.dim() else 0

    def layout(dest):
        strides = list(dest.stride()) if source.dim() else []
        if strides:
            strides[dim] = 0
        step = dest.stride(dim) if dest.dim() else 0
        return strides, Indices((index,), index_strides, ((size, step),))

    if dim == 0 and self.dim() and out.dtype not in NATIVE_ATOMICS:
        out_rows, source_rows = as_rows(out), as_rows(source)
        if out_rows is not None and source_rows is not None:  # sums of the indexed rows, in fp32 (segments.py)
            if out is not self:
                copy_op(self, out=out)
            add_to_rows(out_rows, index.reshape(-1), source_rows, alpha=alpha, check=True)
            return out
    return accumulate(self, out, tuple(source.shape), source, source.stride(), layout, ADD, alpha,
                      scale=alpha != 1)


def index_add(self, dim, index, source, *, alpha=1):
    return add_slices(self, dim, index, source, alpha, torch.empty_like(self))


def index_add_(self, dim, index, source, *, alpha=1):
    check_no_overlap(self)
    check_no_overlap_with(self, index, source)
    return add_slices(self, dim, index, source, alpha, self)


def index_add_out(self, dim, index, source, *, alpha=1, out):
    prepare_out(out, self, self.shape)
    check_no_overlap_with(out, index, source)
    return add_slices(self, dim, index, source, alpha, out)


# --------------------------------------------------------------------------- samples


def _samples(dtype, device, quick):
    from gems.testing.samples_indexing import index_add_samples

    return index_add_samples(dtype, device, quick)


SPECS = [
    OpSpec(
        name="index_add", family="indexing",
        impls={"index_add": index_add, "index_add_": index_add_, "index_add.out": index_add_out},
        call=torch.index_add, samples=_samples, dtypes=ALL,
        perf=lazy_perf("gems.testing.samples_indexing", "slices_perf", "index_add", shapes="index_slices"),
        skips=cuda_asserts("error-index-out-of-range", "error-index-negative"),
        varies_between_runs={"*": "equal indices add in the order their atomics land (as in ATen's CUDA kernel)"},
    ),
]
