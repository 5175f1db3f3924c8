"""masked_scatter: ``masked_scatter``, ``masked_scatter_`` and ``masked_scatter.out``: where the bool mask
is true, self's elements take source's elements one after another (row-major order; source read flat,
at least as many elements as true mask elements); elsewhere self stays. The functional form broadcasts
self and mask together; the in-place form broadcasts the mask to self. masked_select's backward.

The ranks come as in masked_select.py (a count per block, gems' cumsum), but nothing is read to the host:
a true mask element past the end of source is masked and asserted on the device (jitted with
``debug=True``; shared.py's docstring), ATen's CUDA kernel asserting likewise. Where kernels are
interpreted the count is read on the host first and ATen's CPU error raised.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from gems.dtypes import ALL, ATEN_NAMES
from gems.ops.compaction.scan_scatter import BLOCK, NUM_WARPS, block_ranks, device_block_ends, element_flags, grid
from gems.ops.indexing.shared import (
    broadcast_error,
    broadcast_shape,
    check_device,
    check_no_overlap,
    interpreted,
    prepare_out,
)
from gems.ops.indexing.walk import copy_op
from gems.runtime import registration
from gems.runtime.launch import Launcher
from gems.spec import OpSpec, lazy_perf

# --------------------------------------------------------------------------- kernels


@triton.jit(debug=True)
def _masked_scatter_kernel(x_ptr, mask_ptr, ends_ptr, source_ptr, out_ptr, n, n_source, stride_source,
                           BLOCK: tl.constexpr):
    """out[i] = source[rank of i among the true mask elements] where mask[i], else x[i] (x, mask and out
    contiguous; source a 1-D run of any stride: masked_select's backward scatters an expanded gradient, stride 0)."""
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    inside = offs < n
    flags = element_flags(mask_ptr, offs, n, False)
    pos = block_ranks(ends_ptr, flags, pid)
    take = flags != 0
    tl.device_assert((take == 0) | (pos < n_source), "masked_scatter: expected source to have enough elements")
    values = tl.load(source_ptr + pos * stride_source, mask=take & (pos < n_source))
    tl.store(out_ptr + offs, tl.where(take, values, tl.load(x_ptr + offs, mask=inside)), mask=inside)


_masked_scatter = Launcher(_masked_scatter_kernel)

# --------------------------------------------------------------------------- ATen overloads


def _check(self, mask, source):
    if mask.dtype is not torch.bool:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{ATEN_NAMES.get(mask.dtype, mask.dtype)}")
    if source.dtype != self.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got"
                           f"{ATEN_NAMES.get(self.dtype, self.dtype)} and {ATEN_NAMES.get(source.dtype, source.dtype)}")
    check_device(self, mask, source)


def _broadcast(self, mask):
    shape = broadcast_shape(self.shape, mask.shape)
    if shape is None:
        raise broadcast_error(self.shape, mask.shape)
    return shape


def _bits(t):
    return t.view(torch.uint8) if t.dtype is torch.bool else t


def _scatter(x, mask, source, out):
    """out = x with source's elements where mask (x, mask and out contiguous, of one shape)."""
    n = x.numel()
    if n == 0:
        return out
    flags = mask.view(torch.uint8).view(-1)
    ends = device_block_ends(flags, False)
    if interpreted():  # host memory: ATen's CPU check before the launch (shared.py's docstring)
        if registration.recording is not None:
            registration.recording.refused = "the source size is checked on the host under the interpreter"
        if int(ends[-1].item()) > source.numel():
            raise RuntimeError("Number of elements of source < number of ones in mask")
    flat_source = source.reshape(-1)  # a view where one 1-D stride reads it (an expanded or strided 1-D source)
    _masked_scatter(grid(n), _bits(x), flags, ends, _bits(flat_source) if flat_source.numel() else _bits(out),
                    _bits(out), n, flat_source.numel(), flat_source.stride(0), BLOCK, num_warps=NUM_WARPS)
    return out


def masked_scatter(self, mask, source):
    _check(self, mask, source)
    shape = _broadcast(self, mask)
    out = torch.empty(shape, dtype=self.dtype, device=self.device)
    return _scatter(self.expand(shape).contiguous(), mask.expand(shape).contiguous(), source, out)


def masked_scatter_(self, mask, source):
    _check(self, mask, source)
    check_no_overlap(self)
    mask = mask.expand(self.shape).contiguous()
    if self.is_contiguous():
        return _scatter(self, mask, source, self)
    result = _scatter(self.contiguous(), mask, source, torch.empty(self.shape, dtype=self.dtype, device=self.device))
    copy_op(result, out=self)
    return self


def masked_scatter_out(self, mask, source, *, out):
    _check(self, mask, source)
    shape = _broadcast(self, mask)
    prepare_out(out, self, shape)
    result = out if out.is_contiguous() else torch.empty(shape, dtype=self.dtype, device=self.device)
    _scatter(self.expand(shape).contiguous(), mask.expand(shape).contiguous(), source, result)
    if result is not out:
        copy_op(result, out=out)
    return out


# --------------------------------------------------------------------------- samples


def _samples(dtype, device, quick):
    from gems.testing.samples_advanced_indexing import masked_scatter_samples

    return masked_scatter_samples(dtype, device, quick)


SPECS = [
    OpSpec(
        name="masked_scatter", family="indexing",
        impls={"masked_scatter": masked_scatter, "masked_scatter_": masked_scatter_,
               "masked_scatter.out": masked_scatter_out},
        call=torch.masked_scatter, samples=_samples, dtypes=ALL,
        perf=lazy_perf("gems.testing.samples_advanced_indexing", "masked_perf", "masked_scatter",
                       shapes="index_masked"),
        skips={("nvidia", "*", "error-source-short"): "ATen's CUDA kernel asserts on the device for a source shorter "
                                                       "than the mask's count and kills the process's CUDA context"},
    ),
]
