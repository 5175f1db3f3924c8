"""What the blas family's product kernels share (gemm.py's GEMM and GEMV, skinny.py's few-row product):
the accumulator types, the alpha/beta epilogue, how scalars reach a kernel, when index math needs 64 bits,
whether an fp32 product may use TF32, and the column-major copy of an operand."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import float64_bits
from gems.runtime.launch import Launcher, cdiv

# Index math in 64 bits once a tensor spans more elements than int32 offsets reach (with a block of margin).
INT32_SAFE = 2**31 - 1 - 2**20
# The accumulator of each product dtype: fp32 for fp16/bf16/fp32, fp64 for fp64.
TL_ACC = {torch.float16: tl.float32, torch.bfloat16: tl.float32, torch.float32: tl.float32,
          torch.float64: tl.float64}
# One launch covers at most this many batches (the grid's second axis).
MAX_GRID_Y = 65535
# Side of the square tile each program of the column-major copy (gemm.py's, before an fp32 product) moves.
# fp32 on an H100: 4096^2 in 50.4 us (32x32 tiles 52.9, torch's copy 140.7, the copy ceiling 45.5), 8192^2
# in 187.5 us (torch 545.5, ceiling 181.9).
_COPY_TILE = 64


@triton.jit
def _column_major_kernel(
    src_ptr, dst_ptr, rows, cols, stride_sb, stride_sr, stride_sc,
    INT64: tl.constexpr, BLOCK: tl.constexpr,
):
    """dst[batch, c, r] = src[batch, r, c] with dst contiguous (batch, cols, rows), so that dst's transpose
    holds src's values column-major. Grid (tiles, batches): one BLOCK x BLOCK tile per program, read along
    src's rows and written along dst's rows (tl.trans moves it through shared memory)."""
    pid = tl.program_id(0)
    batch = tl.program_id(1).to(tl.int64)
    tiles_c = (cols + BLOCK - 1) // BLOCK
    offs_r = (pid // tiles_c) * BLOCK + tl.arange(0, BLOCK)
    offs_c = (pid % tiles_c) * BLOCK + tl.arange(0, BLOCK)
    if INT64:
        offs_r = offs_r.to(tl.int64)
        offs_c = offs_c.to(tl.int64)
    mask = (offs_r[:, None] < rows) & (offs_c[None, :] < cols)
    tile = tl.load(src_ptr + batch * stride_sb + offs_r[:, None] * stride_sr + offs_c[None, :] * stride_sc, mask=mask)
    dst_ptrs = dst_ptr + batch * rows * cols + offs_c[:, None] * rows + offs_r[None, :]
    tl.store(dst_ptrs, tl.trans(tile), mask=tl.trans(mask))


@triton.jit
def scalar(value, FP64_SCALARS: tl.constexpr, ACC: tl.constexpr):
    """alpha/beta as the accumulator type: fp64 values arrive as their bits (a float argument is fp32)."""
    if FP64_SCALARS:
        return tl.cast(tl.cast(value, tl.int64), tl.float64, bitcast=True)
    else:
        return tl.cast(value, ACC)


@triton.jit
def epilogue(acc, bias_ptrs, mask, alpha, beta, HAS_BIAS: tl.constexpr, SCALED: tl.constexpr,
             FP64_SCALARS: tl.constexpr, ACC: tl.constexpr):
    """alpha * acc + beta * bias, in the accumulator type."""
    if SCALED:
        acc = acc * scalar(alpha, FP64_SCALARS, ACC)
    if HAS_BIAS:
        bias = tl.load(bias_ptrs, mask=mask, other=0).to(ACC)
        acc = acc + bias * scalar(beta, FP64_SCALARS, ACC)
    return acc


def dot_precision(dtype: torch.dtype, device: torch.device) -> str:
    """"tf32" for an fp32 product on CUDA when the user allowed TF32 matmuls (ATen then uses it), else "ieee".
    The native layer's key reads the same flag (gems/native/dispatch.cpp, global_state), so a plan recorded
    under one setting never serves the other."""
    if (device.type == "cuda"  # unreached on the interpreter: CUDA
            and dtype == torch.float32 and torch.backends.cuda.matmul.allow_tf32):
        return "tf32"
    return "ieee"


def span(t: torch.Tensor) -> int:
    """Elements from a tensor's first to its last one, plus one."""
    return sum((n - 1) * abs(s) for n, s in zip(t.shape, t.stride()) if n) + 1


def kernel_scalars(alpha, beta, dtype, has_bias):
    """(alpha, beta, SCALED, FP64_SCALARS) as the kernels take them."""
    fp64 = dtype == torch.float64
    alpha, beta = float(alpha), float(beta) if has_bias else 0.0
    if fp64:
        return float64_bits(alpha), float64_bits(beta), alpha != 1.0, True
    return alpha, beta, alpha != 1.0, False


_copy = Launcher(_column_major_kernel)


def column_major(t: torch.Tensor) -> torch.Tensor:
    """t (batch, rows, cols) with the same values, each matrix stored column-major (stride 1 along rows: b
    (batch, K, N) K-major, a (batch, M, K) M-major) by :func:`_column_major_kernel`; an expanded batch copied
    once."""
    batches, rows, cols = t.shape
    if batches > 1 and t.stride(0) == 0:
        return column_major(t[:1]).expand(t.shape)
    dst = torch.empty((batches, cols, rows), dtype=t.dtype, device=t.device)
    if dst.numel() == 0:
        return dst.transpose(1, 2)
    int64 = max(span(t[0]), rows * cols) > INT32_SAFE
    tiles = cdiv(rows, _COPY_TILE) * cdiv(cols, _COPY_TILE)
    for start in range(0, batches, MAX_GRID_Y):
        stop = min(start + MAX_GRID_Y, batches)
        _copy((tiles, stop - start), t[start:stop], dst[start:stop], rows, cols, *t.stride(), int64, _COPY_TILE,
              num_warps=4)
    return dst.transpose(1, 2)
