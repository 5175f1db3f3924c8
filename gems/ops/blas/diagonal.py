"""Kernels and layout helpers of the matrix-structure operators: tril, diag_embed, diagonal_backward,
diag (diagonal_copy) and trace.

Matrices are handled as (batch, rows, cols) views: the batch dimensions merged into one stride where
the layout allows it (``as_batched``); otherwise the input is first copied contiguous, or the result
computed into a contiguous buffer and copied into ``out``.
"""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from gems.dtypes import ALL
from gems.ops.reduction.planning import reduce_sum
from gems.runtime.launch import Launcher, cdiv, next_power_of_2
from gems.runtime.registration import Fallback

# Tile of a matrix per program: 32 x 64 elements (a few KB), enough per program on a GPU and few
# programs for the interpreter at the small test sizes.
BLOCK_M, BLOCK_N = 32, 64
# Elements per program of a 1-D diagonal (trace, diagonal_copy).
BLOCK_DIAG = 1024
_MAX_GRID_Y = 65535  # batches per launch


@triton.jit
def _embed_kernel(src_ptr, out_ptr, rows, cols, n, row0, col0, stride_sb, stride_sk, tiles_n,
                  stride_ob, stride_om, stride_on, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """out[b, i, j] = src[b, i - row0] where i - row0 == j - col0 (0 <= i - row0 < n), else 0.
    Grid: (tiles of a matrix, batches)."""
    pid = tl.program_id(0)
    batch = tl.program_id(1).to(tl.int64)
    offs_m = ((pid // tiles_n) * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)[:, None]
    offs_n = ((pid % tiles_n) * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)[None, :]
    inside = (offs_m < rows) & (offs_n < cols)
    k = offs_m - row0
    on_diagonal = (k == offs_n - col0) & (k >= 0) & (k < n) & inside
    values = tl.load(src_ptr + batch * stride_sb + k * stride_sk, mask=on_diagonal, other=0)
    tl.store(out_ptr + batch * stride_ob + offs_m * stride_om + offs_n * stride_on, values, mask=inside)


@triton.jit
def _tril_kernel(x_ptr, out_ptr, rows, cols, diagonal, tiles_n,
                 stride_xb, stride_xm, stride_xn, stride_ob, stride_om, stride_on,
                 INPLACE: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """out[b, i, j] = x[b, i, j] where j - i <= diagonal, else 0. In place only the zeros are written."""
    pid = tl.program_id(0)
    batch = tl.program_id(1).to(tl.int64)
    offs_m = ((pid // tiles_n) * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)[:, None]
    offs_n = ((pid % tiles_n) * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)[None, :]
    inside = (offs_m < rows) & (offs_n < cols)
    keep = (offs_n - offs_m) <= diagonal
    out = out_ptr + batch * stride_ob + offs_m * stride_om + offs_n * stride_on
    if INPLACE:
        tl.store(out, tl.full([BLOCK_M, BLOCK_N], 0, out_ptr.dtype.element_ty), mask=inside & (keep == 0))
    else:
        x = tl.load(x_ptr + batch * stride_xb + offs_m * stride_xm + offs_n * stride_xn, mask=inside & keep, other=0)
        tl.store(out, x, mask=inside)


@triton.jit
def _diagonal_kernel(x_ptr, out_ptr, n, start, stride, stride_xb, stride_ob, SUM: tl.constexpr, ACC: tl.constexpr,
                     BLOCK: tl.constexpr):
    """out[b, k] = x[b * stride_xb + start + k * stride] for k < n. With SUM (one batch, one program)
    out[0] = the sum of them. Grid: (blocks of the diagonal, batches)."""
    offs = tl.arange(0, BLOCK).to(tl.int64)
    if SUM:
        acc = tl.full([BLOCK], 0, ACC)
        for k in range(0, n, BLOCK):
            acc += tl.load(x_ptr + start + (k + offs) * stride, mask=k + offs < n, other=0).to(ACC)
        tl.store(out_ptr, reduce_sum(acc, 0).to(out_ptr.dtype.element_ty))
    else:
        batch = tl.program_id(1).to(tl.int64)
        offs = tl.program_id(0).to(tl.int64) * BLOCK + offs
        values = tl.load(x_ptr + batch * stride_xb + start + offs * stride, mask=offs < n)
        tl.store(out_ptr + batch * stride_ob + offs, values, mask=offs < n)


_embed = Launcher(_embed_kernel)
_tril = Launcher(_tril_kernel)
_diagonal = Launcher(_diagonal_kernel)

# Sums accumulate in fp32 (fp16, bf16, fp32), fp64, or int64 (integers and bool), as ATen's do.
_TL_ACC = {torch.float16: tl.float32, torch.bfloat16: tl.float32, torch.float32: tl.float32,
           torch.float64: tl.float64, torch.int64: tl.int64}


def check_dtype(name: str, t: torch.Tensor) -> None:
    if t.dtype not in ALL:
        raise Fallback(f"{name} of {t.dtype} is not handled by gems")


def as_batched(t: torch.Tensor) -> torch.Tensor | None:
    """``t`` (..., rows, cols) as a (batch, rows, cols) view, or None when its batch dims do not merge."""
    try:
        return t.view(math.prod(t.shape[:-2]), t.shape[-2], t.shape[-1])
    except RuntimeError:
        return None


def _tiles(rows, cols):
    block_m = min(BLOCK_M, next_power_of_2(rows))
    block_n = min(BLOCK_N, next_power_of_2(cols))
    return block_m, block_n, cdiv(cols, block_n)


def embed_diagonal(src: torch.Tensor, out: torch.Tensor, row0: int, col0: int) -> torch.Tensor:
    """Write the (batch, rows, cols) ``out``: src (batch, n) on the diagonal that starts at
    (row0, col0), zeros elsewhere."""
    batches, rows, cols = out.shape
    if out.numel() == 0:
        return out
    block_m, block_n, tiles_n = _tiles(rows, cols)
    for start in range(0, batches, _MAX_GRID_Y):
        stop = min(start + _MAX_GRID_Y, batches)
        part, dest = src[start:stop], out[start:stop]
        _embed((cdiv(rows, block_m) * tiles_n, stop - start), part, dest, rows, cols, src.shape[1],
               row0, col0, part.stride(0), part.stride(1), tiles_n, *dest.stride(), block_m, block_n)
    return out


def diagonal_layout(sizes, offset: int, dim1: int, dim2: int):
    """(dims of a tensor of ``sizes`` other than dim1, dim2 in order, then dim1, dim2; diagonal length,
    (row, col) where it starts). ATen's errors for dims out of range or identical."""
    rank = len(sizes)
    dim1, dim2 = (wrap_dim(d, rank) for d in (dim1, dim2))
    if dim1 == dim2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    order = [d for d in range(rank) if d not in (dim1, dim2)] + [dim1, dim2]
    row0, col0 = max(-offset, 0), max(offset, 0)
    n = max(0, min(sizes[dim1] - row0, sizes[dim2] - col0))
    return order, n, row0, col0


def wrap_dim(dim: int, rank: int) -> int:
    if not -max(rank, 1) <= dim < max(rank, 1):
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(rank, 1)}, {max(rank, 1) - 1}], "
                         f"but got {dim})")
    return dim % max(rank, 1)


def embed(src: torch.Tensor, sizes, offset: int, dim1: int, dim2: int, out=None) -> torch.Tensor:
    """A tensor of ``sizes`` (new, or ``out`` of that shape and src's dtype, sharing no memory with src):
    zeros, with ``src`` (the other dims..., n) on its diagonal (offset, dim1, dim2). diag_embed and
    diagonal_backward."""
    order, n, row0, col0 = diagonal_layout(sizes, offset, dim1, dim2)
    out = torch.empty(sizes, dtype=src.dtype, device=src.device) if out is None else out
    batch = math.prod(sizes[d] for d in order[:-2])
    flat = src.reshape(batch, n)
    view = as_batched(out.permute(order))
    if view is not None:
        embed_diagonal(flat, view, row0, col0)
        return out
    # The result's other dims do not merge in the permuted order: fill a buffer in that order and copy.
    buffer = torch.empty([sizes[d] for d in order], dtype=src.dtype, device=src.device)
    embed_diagonal(flat, as_batched(buffer), row0, col0)
    out.permute(order).copy_(buffer)
    return out


def lower_triangle(x: torch.Tensor, out: torch.Tensor, diagonal: int, inplace: bool) -> torch.Tensor:
    """out = tril(x, diagonal) for (batch, rows, cols) views (``inplace``: out is x)."""
    batches, rows, cols = out.shape
    if out.numel() == 0:
        return out
    block_m, block_n, tiles_n = _tiles(rows, cols)
    for start in range(0, batches, _MAX_GRID_Y):
        stop = min(start + _MAX_GRID_Y, batches)
        xs, os = x[start:stop], out[start:stop]
        _tril((cdiv(rows, block_m) * tiles_n, stop - start), xs, os, rows, cols, diagonal, tiles_n,
              *xs.stride(), *os.stride(), inplace, block_m, block_n)
    return out


def read_diagonal(x: torch.Tensor, offset: int, out: torch.Tensor, total: bool = False) -> torch.Tensor:
    """The diagonals of the (batch, rows, cols) ``x`` at ``offset`` into the contiguous (batch, n)
    ``out``; or (``total``, one 2-D matrix) its sum into the 0-d ``out``, accumulated in fp32 (fp64 for
    fp64, int64 for integers)."""
    if total:
        x = x[None]
    batches, rows, cols = x.shape
    row0, col0 = max(-offset, 0), max(offset, 0)
    n = max(0, min(rows - row0, cols - col0))
    start = row0 * x.stride(1) + col0 * x.stride(2) if n else 0
    stride = x.stride(1) + x.stride(2)
    if total:
        _diagonal((1, 1), x, out, n, start, stride, 0, 0, True, _TL_ACC[out.dtype], BLOCK_DIAG)
    elif n and batches:
        block = min(BLOCK_DIAG, next_power_of_2(n))
        for first in range(0, batches, _MAX_GRID_Y):
            stop = min(first + _MAX_GRID_Y, batches)
            xs, os = x[first:stop], out[first:stop]
            _diagonal((cdiv(n, block), stop - first), xs, os, n, start, stride, xs.stride(0), os.stride(0), False,
                      tl.float32, block)
    return out
