"""repeat_interleave.Tensor (and .Tensor_out): for 1-d integer ``repeats``, each index i written repeats[i]
times: [0] * r0 + [1] * r1 + ...

The result's length is the repeats' sum, known only on the device: as ATen's CUDA kernel does, gems reads it
back (one synchronization, with the check that no repeat is negative), unless ``output_size`` gives it (then
nothing is read back and nothing is checked, as on CUDA). Two launches: one program scans the repeats (and
counts negative ones), then each output element finds its index by binary search in the running sums.

repeat_interleave.self_Tensor and .self_int are CompositeImplicitAutograd: self_Tensor runs this, then
index_select with the result; self_int is a clone of an expanded view (no repeat_interleave.Tensor at all).
"""

import torch
import triton
import triton.language as tl

from gems.dtypes import ALL
from gems.ops.shape.remap import dense_copy
from gems.ops.shape.shared import shape_samples
from gems.runtime.launch import Launcher, cdiv, next_power_of_2
from gems.runtime.registration import Fallback
from gems.spec import OpSpec

# Repeats scanned per step of the one scanning program: its loop runs len(repeats) / SCAN_BLOCK times.
SCAN_BLOCK = 1024

@triton.jit
def _scan_kernel(repeats_ptr, sums_ptr, n, BLOCK: tl.constexpr):
    """sums[0:n] = inclusive running sums of repeats (int64); sums[n] = how many repeats are negative."""
    carry = tl.zeros([1], tl.int64)
    negative = tl.zeros([1], tl.int64)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        r = tl.load(repeats_ptr + offs, mask=offs < n, other=0).to(tl.int64)
        sums = tl.cumsum(r, axis=0) + carry
        tl.store(sums_ptr + offs, sums, mask=offs < n)
        carry += tl.sum(r, axis=0, keep_dims=True)
        negative += tl.sum((r < 0).to(tl.int64), axis=0, keep_dims=True)
    tl.store(sums_ptr + n + tl.arange(0, 1), negative)


@triton.jit
def _fill_kernel(sums_ptr, out_ptr, n, total, steps, BLOCK: tl.constexpr):
    """out[j] = the first i with sums[i] > j, by binary search (``steps`` halvings of [0, n))."""
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    lo = tl.zeros([BLOCK], tl.int64)
    hi = lo + n
    for _ in range(0, steps):
        mid = (lo + hi) // 2
        below = tl.load(sums_ptr + mid, mask=mid < hi, other=0) <= offs
        lo = tl.where((mid < hi) & below, mid + 1, lo)
        hi = tl.where((mid < hi) & (below == 0), mid, hi)
    tl.store(out_ptr + offs, lo.to(out_ptr.dtype.element_ty), mask=offs < total)


_scan = Launcher(_scan_kernel)
_fill = Launcher(_fill_kernel)


def _check(repeats):
    if repeats.dim() != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if repeats.dtype not in (torch.int32, torch.int64):
        raise Fallback(f"repeats of dtype {repeats.dtype}: ATen refuses them, in its way per device")


def _repeat_into(repeats, sums, total, out):
    n = repeats.numel()
    if total:
        block = 1024
        _fill((cdiv(total, block),), sums, out, n, total, max(1, n.bit_length()), block)
    return out


def _scanned(repeats, output_size):
    """(running sums, total): the total read back (with the negative check) unless output_size gives it."""
    n = repeats.numel()
    sums = torch.empty(n + 1, dtype=torch.int64, device=repeats.device)
    _scan((1,), repeats, sums, n, min(SCAN_BLOCK, next_power_of_2(n)))
    if output_size is not None:
        return sums, output_size
    # .item() dispatches (aten::item), so the native layer keeps such calls in Python; .tolist() and .cpu() of a
    # CPU tensor read it without dispatching, and a plan recorded around them would replay this call's total.
    total = sums[n - 1].item()
    if sums[n].item():
        raise RuntimeError("repeats can not be negative")
    return sums, total


def repeat_interleave(repeats, *, output_size=None):
    _check(repeats)
    if repeats.numel() == 0:
        return torch.empty(0, dtype=repeats.dtype, device=repeats.device)
    repeats = repeats if repeats.is_contiguous() else dense_copy(repeats)
    sums, total = _scanned(repeats, output_size)
    return _repeat_into(repeats, sums, total, torch.empty(total, dtype=repeats.dtype, device=repeats.device))


def repeat_interleave_out(repeats, *, output_size=None, out):
    _check(repeats)
    if out.dtype != repeats.dtype or out.device != repeats.device:
        raise RuntimeError(f"Expected out tensor to have dtype {repeats.dtype} and device {repeats.device}, but got "
                           f"{out.dtype} on {out.device} instead")
    if repeats.numel() == 0:
        return out.resize_(0)
    if out.untyped_storage().data_ptr() == repeats.untyped_storage().data_ptr():
        raise Fallback("out= shares memory with repeats")
    repeats = repeats if repeats.is_contiguous() else dense_copy(repeats)
    sums, total = _scanned(repeats, output_size)
    out.resize_(total)
    if not out.is_contiguous():
        raise Fallback("a strided out=")
    return _repeat_into(repeats, sums, total, out)


SPECS = [
    OpSpec(
        name="repeat_interleave", family="tensor",
        impls={"repeat_interleave.Tensor": repeat_interleave, "repeat_interleave.Tensor_out": repeat_interleave_out},
        call=torch.repeat_interleave, samples=shape_samples("repeat_interleave_samples"), dtypes=ALL,
        # not "exact": the copies are exact either way, but self's gradient is a float sum (below)
        tolerance="pointwise",
        varies_between_runs={"self-tensor-grad": "the gradient of self is index_add's sum over the repeats "
                                                 "(index_select's backward), whose float atomics add in an order "
                                                 "that varies from run to run on a GPU"}),
]
