"""masked_select: ``masked_select`` and ``masked_select.out``: the elements of self where the bool mask
is true, in row-major order of their broadcast shape, as a 1-d tensor. Its backward
(masked_select_backward, a composite) is masked_scatter (masked_scatter.py).

Compaction as in gems/ops/compaction/scan_scatter.py: a count of true mask elements per block, gems'
cumsum of the counts, the total read to the host to size the result (as ATen does), then one launch
that ranks each block's selected elements and writes them.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from gems.dtypes import ALL
from gems.ops.compaction.scan_scatter import BLOCK, NUM_WARPS, block_ends, block_ranks, element_flags, grid
from gems.ops.indexing.shared import broadcast_error, broadcast_shape, check_device, check_no_overlap_with
from gems.runtime.launch import Launcher
from gems.spec import OpSpec, lazy_perf

# --------------------------------------------------------------------------- kernels


@triton.jit
def _select_kernel(x_ptr, mask_ptr, ends_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out[rank of i among the selected] = x[i] where mask[i] (x and mask contiguous, n elements)."""
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    flags = element_flags(mask_ptr, offs, n, False)
    pos = block_ranks(ends_ptr, flags, pid)
    keep = flags != 0
    tl.store(out_ptr + pos, tl.load(x_ptr + offs, mask=keep), mask=keep)


_select = Launcher(_select_kernel)

# --------------------------------------------------------------------------- ATen overloads


def broadcast_mask(op, self, mask):
    """(self, mask as uint8) both expanded to their broadcast shape, contiguous."""
    if mask.dtype is not torch.bool:
        raise RuntimeError(f"{op}: expected BoolTensor for mask")
    check_device(self, mask)
    shape = broadcast_shape(self.shape, mask.shape)
    if shape is None:
        raise broadcast_error(self.shape, mask.shape)
    return self.expand(shape).contiguous(), mask.expand(shape).contiguous().view(torch.uint8)


def _masked_select(self, mask, out=None):
    if out is not None and out.dtype != self.dtype:
        raise RuntimeError("masked_select(): self and result must have the same scalar type")
    x, flags = broadcast_mask("masked_select", self, mask)
    n = x.numel()
    ends, total = block_ends(flags.view(-1), False) if n else (None, 0)
    if out is None:
        out = torch.empty(total, dtype=self.dtype, device=self.device)
    else:
        check_device(self, out)
        check_no_overlap_with(out, self, mask)
        if tuple(out.shape) != (total,):
            out.resize_((total,))
    if total:
        _select(grid(n), x.view(torch.uint8) if x.dtype is torch.bool else x, flags, ends,
                out.view(torch.uint8) if out.dtype is torch.bool else out, n, BLOCK, num_warps=NUM_WARPS)
    return out


def masked_select(self, mask):
    return _masked_select(self, mask)


def masked_select_out(self, mask, *, out):
    return _masked_select(self, mask, out)


# --------------------------------------------------------------------------- samples


def _samples(dtype, device, quick):
    from gems.testing.samples_advanced_indexing import masked_select_samples

    return masked_select_samples(dtype, device, quick)


SPECS = [
    OpSpec(
        name="masked_select", family="indexing", impls={"masked_select": masked_select,
                                                        "masked_select.out": masked_select_out},
        call=torch.masked_select, samples=_samples, dtypes=ALL,
        perf=lazy_perf("gems.testing.samples_advanced_indexing", "masked_perf", "masked_select", shapes="index_masked"),
    ),
]
