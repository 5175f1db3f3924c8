"""index_put: ``index_put``, ``index_put_``, ``_index_put_impl_`` (what both reach in ATen) and
``index_put.out``: ``self[indices] = values`` (advanced.py's indexing; values broadcast to the indexed
shape), or ``+= values`` with ``accumulate=True``, where equal indices add up. index.Tensor's backward
is index_put with accumulate.

walk.py's scatter over the indexed shape. Without accumulate, equal indices each store their value and
which one stays is unspecified, as in ATen (the samples check that the result is one of the written
values: Sample.tie_check). With accumulate, atomics add in the result where its dtype has them (fp32,
fp64, int32, int64; float sums may then differ in their last bits from call to call). The other dtypes
sum in fp32 (fp16/bf16) or int64 and round once into the result: ``self[ids] += rows`` (one index tensor
on dim 0) through segments.py's sums of the indexed rows, touching only those rows (as ATen's CUDA
kernel, which sorts the indices first; these need no sort); any other indexing through a scratch the size
of self (walk.accumulate).
"""

from __future__ import annotations

import torch
import triton.language as tl  # noqa: F401  (kernel modules import it: the interpreter needs it)

from gems.dtypes import ALL, ATEN_NAMES
from gems.ops.indexing.advanced import plan
from gems.ops.indexing.segments import add_to_rows, as_rows
from gems.ops.indexing.shared import check_no_overlap, check_no_overlap_with, cuda_asserts, prepare_out, scalar_of
from gems.ops.indexing.walk import ADD, NATIVE_ATOMICS, STORE, accumulate, copy_op, scatter
from gems.spec import OpSpec, lazy_perf

# --------------------------------------------------------------------------- ATen overloads


def _put(self, indices, values, accumulating, out):
    if isinstance(values, torch.Tensor) and values.dtype != self.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{ATEN_NAMES.get(self.dtype, self.dtype)} for the destination and "
                           f"{ATEN_NAMES.get(values.dtype, values.dtype)} for the source.")
    if out is self:
        check_no_overlap(self)
        check_no_overlap_with(self, *(v for v in (values, *indices) if isinstance(v, torch.Tensor)))
    indexed = plan(self, indices)
    src = src_strides = value = None
    if not isinstance(values, torch.Tensor):
        value = scalar_of(values, self.dtype)
    elif values.device != self.device and values.dim() == 0 and values.device.type == "cpu":
        value = scalar_of(values.item(), self.dtype)  # a host number, read without a device sync
    else:
        try:
            src = values.expand(indexed.shape)
        except RuntimeError:
            raise RuntimeError(f"shape mismatch: value tensor of shape {list(values.shape)} cannot be broadcast to "
                               f"indexing result of shape {list(indexed.shape)}") from None
        src_strides = src.stride()
    if accumulating and out.dtype not in NATIVE_ATOMICS and src is not None and indexed.leading_rows():
        # Sums of the indexed rows in fp32, touching only those rows (segments.py).
        out_rows = as_rows(out)
        if out_rows is not None:
            if out is not self:
                copy_op(self, out=out)
            n = indexed.tensors[0].numel()
            add_to_rows(out_rows, indexed.tensors[0].reshape(-1), src.reshape(n, out_rows.shape[1]), wrap=True,
                        check=True)
            return out
    if accumulating:
        return accumulate(self, out, indexed.shape, src, src_strides, indexed.layout, ADD,
                          1 if value is None else value)
    if out is not self:
        copy_op(self, out=out)
    scatter(out, *indexed.layout(out), indexed.shape, src, src_strides, STORE, 0 if value is None else value)
    return out


def index_put(self, indices, values, accumulate=False):
    return _put(self, indices, values, accumulate, torch.empty_like(self))


def index_put_(self, indices, values, accumulate=False):
    return _put(self, indices, values, accumulate, self)


def index_put_impl_(self, indices, values, accumulate=False, unsafe=False):
    return _put(self, indices, values, accumulate, self)


def index_put_out(self, indices, values, accumulate=False, *, out):
    return _put(self, indices, values, accumulate, prepare_out(out, self, self.shape))


# --------------------------------------------------------------------------- samples


def _samples(dtype, device, quick):
    from gems.testing.samples_advanced_indexing import index_put_samples

    return index_put_samples(dtype, device, quick)


SPECS = [
    OpSpec(
        name="index_put", family="indexing",
        impls={"index_put": index_put, "index_put_": index_put_, "_index_put_impl_": index_put_impl_,
               "index_put.out": index_put_out},
        call=torch.ops.aten.index_put, samples=_samples, dtypes=ALL,
        perf=lazy_perf("gems.testing.samples_advanced_indexing", "put_perf", shapes="index_rows"),
        skips=cuda_asserts("error-index-out-of-range", "error-index-negative"),
        varies_between_runs={"*": "with accumulate, equal indices add in the order their atomics land"},
    ),
]
