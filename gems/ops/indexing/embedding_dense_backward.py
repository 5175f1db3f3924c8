"""embedding_dense_backward: ``embedding_dense_backward`` and its ``.out`` form, the gradient of
embedding's weight: grad_weight[w] = sum of grad_output's rows whose index is w (over all of indices'
positions), none for w == padding_idx, divided by w's count with scale_grad_by_freq. Indices outside
[0, num_weights) add nothing (as ATen's CPU kernel).

Deterministic, accumulated in fp32 (fp64 for fp64), and each row of the result written exactly once:

1. gems' stable sort of the flattened indices (gems/ops/sorting): the tokens of each row, in order;
2. ``_bounds_kernel``: where each row's tokens start in the sorted indices (a binary search per row);
3. ``_rows_kernel``: per tile of BLOCK_W rows x BLOCK_D columns, adds each row's grad rows in sorted
   (token) order and stores the tile, zeros for the rows nothing points at.

ATen's CUDA kernel zero-fills the (num_weights, D) result, sorts, and sums segments through a buffer of
partial sums; here the zeros come with the same one write of the result, the partial-sum buffer does
not exist, and the sum order (ascending token) does not depend on the run. A row with many tokens is
summed by one program (BLOCK_W rows per program add their tokens one step at a time), so an index
repeated thousands of times serializes on that program.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from gems.dtypes import FLOATS
from gems.ops.indexing.shared import TILE_BYTES, prepare_out
from gems.ops.sorting.sort import sort_values_indices
from gems.runtime.launch import Launcher, cdiv, next_power_of_2
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, lazy_perf

BOUNDS_BLOCK = 1024  # rows whose start one program searches (a few binary searches per thread)
MAX_BLOCK_D = 512  # columns per tile: the grad rows a step adds are BLOCK_W runs of this many elements

# --------------------------------------------------------------------------- kernels


@triton.jit
def _bounds_kernel(keys_ptr, starts_ptr, n, num_weights, steps, BLOCK: tl.constexpr):
    """starts[w] = the first position of the sorted keys holding a value >= w, for w in [0, num_weights]."""
    w = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = w <= num_weights
    lo = tl.zeros([BLOCK], tl.int64)
    hi = tl.full([BLOCK], n, tl.int64)
    for _ in range(steps):
        active = lo < hi
        mid = (lo + hi) // 2
        key = tl.load(keys_ptr + mid, mask=active, other=0).to(tl.int64)
        right = active & (key < w)
        lo = tl.where(right, mid + 1, lo)
        hi = tl.where(active & (right == 0), mid, hi)
    tl.store(starts_ptr + w, lo, mask=mask)


@triton.jit
def _rows_kernel(grad_ptr, order_ptr, starts_ptr, out_ptr, num_weights, n_cols, col_blocks, stride_gn, stride_gd,
                 stride_on, stride_od, padding_idx, ACC: tl.constexpr, SCALE: tl.constexpr, BLOCK_W: tl.constexpr,
                 BLOCK_D: tl.constexpr):
    """out[w, :] = sum over the tokens of row w (order[starts[w]:starts[w + 1]]) of grad[token, :]."""
    pid = tl.program_id(0).to(tl.int64)
    w = (pid // col_blocks) * BLOCK_W + tl.arange(0, BLOCK_W)
    cols = (pid % col_blocks) * BLOCK_D + tl.arange(0, BLOCK_D)
    row_mask = w < num_weights
    col_mask = cols < n_cols
    lo = tl.load(starts_ptr + w, mask=row_mask, other=0)
    count = tl.where(w == padding_idx, 0, tl.load(starts_ptr + w + 1, mask=row_mask, other=0) - lo)
    acc = tl.zeros([BLOCK_W, BLOCK_D], ACC)
    for k in range(0, tl.max(count, 0)):
        take = k < count
        token = tl.load(order_ptr + lo + k, mask=take, other=0)
        acc += tl.load(grad_ptr + token[:, None] * stride_gn + cols[None, :] * stride_gd,
                       mask=take[:, None] & col_mask[None, :], other=0).to(ACC)
    if SCALE:
        acc = acc / tl.maximum(count, 1).to(ACC)[:, None]
    tl.store(out_ptr + w[:, None] * stride_on + cols[None, :] * stride_od, acc.to(out_ptr.dtype.element_ty),
             mask=row_mask[:, None] & col_mask[None, :])


_bounds = Launcher(_bounds_kernel)
_rows = Launcher(_rows_kernel)

# --------------------------------------------------------------------------- ATen overloads


def _backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq, out=None):
    if indices.dtype not in (torch.int64, torch.int32):
        raise RuntimeError("Expected tensor for argument #2 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {indices.type()} instead (while checking arguments for "
                           "embedding_backward)")
    if grad_output.dtype not in FLOATS:
        raise Fallback(f"embedding_dense_backward of {grad_output.dtype} is left to ATen")
    n = indices.numel()
    width = grad_output.shape[-1] if grad_output.dim() else 1
    grad = grad_output.reshape(n, width)
    shape = (num_weights, width)
    out = torch.empty(shape, dtype=grad.dtype, device=grad.device) if out is None else prepare_out(out, grad, shape)
    if out.numel() == 0:
        return out
    if n:
        keys, order = sort_values_indices(indices.reshape(-1), 0, stable=True)
    else:
        keys = order = torch.empty(1, dtype=torch.int64, device=grad.device)  # never read: every row is empty
    starts = torch.empty(num_weights + 1, dtype=torch.int64, device=grad.device)
    _bounds((cdiv(num_weights + 1, BOUNDS_BLOCK),), keys, starts, n, num_weights, n.bit_length() + 1, BOUNDS_BLOCK,
            num_warps=4)
    acc = torch.float64 if grad.dtype is torch.float64 else torch.float32
    block_d = min(next_power_of_2(width), MAX_BLOCK_D)
    block_w = min(next_power_of_2(num_weights), max(1, TILE_BYTES // 4 // block_d))
    col_blocks = cdiv(width, block_d)
    _rows((cdiv(num_weights, block_w) * col_blocks,), grad, order, starts, out, num_weights, width, col_blocks,
          grad.stride(0), grad.stride(1), out.stride(0), out.stride(1), padding_idx,
          tl.float64 if acc is torch.float64 else tl.float32, bool(scale_grad_by_freq), block_w, block_d, num_warps=4)
    return out


def embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq):
    return _backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq)


def embedding_dense_backward_out(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq, *, out):
    return _backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq, out)


# --------------------------------------------------------------------------- samples


def _samples(dtype, device, quick):
    from gems.testing.samples_indexing import embedding_backward_samples

    return embedding_backward_samples(dtype, device, quick)


SPECS = [
    OpSpec(
        name="embedding_dense_backward", family="indexing",
        impls={"embedding_dense_backward": embedding_dense_backward,
               "embedding_dense_backward.out": embedding_dense_backward_out},
        call=torch.ops.aten.embedding_dense_backward, samples=_samples, dtypes=FLOATS,
        perf=lazy_perf("gems.testing.samples_indexing", "rows_perf", "embedding_dense_backward", shapes="index_rows"),
    ),
]
