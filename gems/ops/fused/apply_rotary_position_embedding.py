"""apply_rotary_position_embedding: rotary position embedding (RoPE) of queries or keys in one kernel.

    x: (..., seq_len, n_heads, head_dim), cos and sin: (seq_len, head_dim / 2), the angle of each
    position and frequency. Each pair (x1, x2) of x's last dim is rotated by its angle:
        out1 = x1 * cos - x2 * sin,   out2 = x2 * cos + x1 * sin
    GPT-NeoX layout (interleaved=False): the pairs are (x[j], x[j + head_dim / 2]), the two halves;
    GPT-J layout (interleaved=True): the pairs are (x[2j], x[2j + 1]), neighbours.

x is read once and the result written once (computed in fp32, fp64 for fp64, rounded once); the
position of row m of the (rows, head_dim) view is (m / n_heads) % seq_len. The eager composite
(halves or even/odd slices, four multiplies, cat or stack) is the reference.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from gems.dtypes import FLOATS
from gems.ops.fused.api import api_function
from gems.ops.normalization.rows import as_rows, compute_dtype, needs_int64
from gems.runtime.launch import Launcher, cdiv, next_power_of_2
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, PerfSpec, lazy

NAME = "gems.fused.apply_rotary_position_embedding"
# Rows per program: a 4K-element tile on the GPU (head_dim 128: 32 rows); the interpreter takes 16K.
GPU_TILE, INTERP_TILE = 4096, 1 << 14


@triton.jit
def rope_kernel(
    x_ptr, cos_ptr, sin_ptr, out_ptr,
    n_rows, n_heads, seq_len, half, stride_xm, stride_xn, stride_cs, stride_cd, stride_ss, stride_sd,
    INTERLEAVED: tl.constexpr, COMPUTE: tl.constexpr, INT64: tl.constexpr, BLOCK_M: tl.constexpr,
    BLOCK_H: tl.constexpr,
):
    """out[m, pair j] = rotate(x[m, pair j], angle[pos(m), j]) for BLOCK_M rows; out contiguous."""
    pid = tl.program_id(0)
    if INT64:
        pid = pid.to(tl.int64)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    offs = tl.arange(0, BLOCK_H)
    mask = (rows < n_rows)[:, None] & (offs < half)[None, :]
    pos = (rows // n_heads) % seq_len
    c = tl.load(cos_ptr + pos[:, None] * stride_cs + offs[None, :] * stride_cd, mask=mask, other=0).to(COMPUTE)
    s = tl.load(sin_ptr + pos[:, None] * stride_ss + offs[None, :] * stride_sd, mask=mask, other=0).to(COMPUTE)
    if INTERLEAVED:
        first = offs * 2
        second = first + 1
    else:
        first = offs
        second = offs + half
    x_rows = x_ptr + rows[:, None] * stride_xm
    x1 = tl.load(x_rows + first[None, :] * stride_xn, mask=mask, other=0).to(COMPUTE)
    x2 = tl.load(x_rows + second[None, :] * stride_xn, mask=mask, other=0).to(COMPUTE)
    out_rows = out_ptr + rows[:, None] * (2 * half)
    tl.store(out_rows + first[None, :], (x1 * c - x2 * s).to(out_ptr.dtype.element_ty), mask=mask)
    tl.store(out_rows + second[None, :], (x2 * c + x1 * s).to(out_ptr.dtype.element_ty), mask=mask)


_launcher = Launcher(rope_kernel)


def _check(x, cos, sin):
    if x.dim() < 3 or x.shape[-1] % 2:
        raise ValueError(f"x must be (..., seq_len, n_heads, head_dim) with an even head_dim, got {list(x.shape)}")
    want = [x.shape[-3], x.shape[-1] // 2]
    for label, t in (("cos", cos), ("sin", sin)):
        if list(t.shape) != want:
            raise ValueError(f"{label} must have shape (seq_len, head_dim / 2) = {want}, got {list(t.shape)}")


def reference(x, cos, sin, interleaved=False):
    _check(x, cos, sin)
    c, s = cos[:, None, :], sin[:, None, :]
    if interleaved:
        x1, x2 = x[..., 0::2], x[..., 1::2]
        return torch.stack((x1 * c - x2 * s, x2 * c + x1 * s), dim=-1).flatten(-2)
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((x1 * c - x2 * s, x2 * c + x1 * s), dim=-1)


def _apply_rotary_position_embedding(x, cos, sin, interleaved=False):
    _check(x, cos, sin)
    if x.dtype not in FLOATS or cos.dtype != x.dtype or sin.dtype != x.dtype:
        raise Fallback("the kernel takes x, cos and sin of one floating dtype")
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    head_dim = x.shape[-1]
    x2 = as_rows(x, head_dim)
    n_rows, half = x2.shape[0], head_dim // 2
    if out.numel() == 0:
        return out
    block_h = next_power_of_2(half)
    tile = INTERP_TILE if triton.knobs.runtime.interpret else GPU_TILE
    block_m = min(next_power_of_2(n_rows), max(1, tile // (2 * block_h)))
    _launcher((cdiv(n_rows, block_m),), x2, cos, sin, out, n_rows, x.shape[-2], x.shape[-3], half,
              x2.stride(0), x2.stride(1), cos.stride(0), cos.stride(1), sin.stride(0), sin.stride(1),
              bool(interleaved), compute_dtype(x.dtype), needs_int64(x2), block_m, block_h,
              num_warps=4 if block_m * block_h <= 1024 else 8)
    return out


apply_rotary_position_embedding = api_function(NAME, _apply_rotary_position_embedding, reference)

SPECS = [
    OpSpec(
        name="apply_rotary_position_embedding", family="fused", impls={},
        api={NAME: apply_rotary_position_embedding}, reference=reference,
        call=apply_rotary_position_embedding,
        samples=lazy("gems.testing.samples_fused", "rope_samples"),
        dtypes=FLOATS,
        deliberate_fallbacks={"grad": "gems.fused kernels have no backward: the eager composite runs"},
        perf=PerfSpec(inputs=lazy("gems.testing.samples_fused", "rope_inputs"), shapes="rope",
                      bytes=lazy("gems.testing.samples_norm", "io_bytes")),
    ),
]
