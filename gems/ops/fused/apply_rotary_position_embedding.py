"""apply_rotary_position_embedding: rotary position embedding (RoPE) of queries or keys, one kernel each
way.

    x: (..., seq_len, n_heads, head_dim); cos and sin: (seq_len, head_dim / 2), or (batch, seq_len,
    head_dim / 2) with batch the product of x's leading dims (or 1): the angle of each position and
    frequency, per sequence where positions differ (Hugging Face's position_ids). Each pair (x1, x2) of
    x's last dim is rotated by its angle:
        out1 = x1 * cos - x2 * sin,   out2 = x2 * cos + x1 * sin
    GPT-NeoX layout (interleaved=False): the pairs are (x[j], x[j + head_dim / 2]), the two halves;
    GPT-J layout (interleaved=True): the pairs are (x[2j], x[2j + 1]), neighbours.
    backward: the rotation by -angle, dx1 = dy1 * cos + dy2 * sin, dx2 = dy2 * cos - dy1 * sin.

x (or dy) is read once through its strides as (batch, seq_len, n_heads, head_dim), so Hugging Face's
query seen as (batch, seq, heads, dim) (a transposed view of its projection) needs no copy, and the
result written once, contiguous (computed in fp32, fp64 for fp64, rounded once). cos and sin get no
gradient (they are computed from positions); one that requires grad runs the composite. The eager
composite (halves or even/odd slices, four multiplies, cat or stack) is the reference.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from torch.autograd.function import once_differentiable

from gems.dtypes import FLOATS
from gems.ops.fused.api import api_function, needs_grad
from gems.ops.normalization.rows import compute_dtype, needs_int64
from gems.runtime import operators
from gems.runtime.launch import Launcher, cdiv, next_power_of_2
from gems.runtime.native_backward import Attr, Grad, Result, Saved, native_backward
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, PerfSpec, lazy

NAME = "gems.fused.apply_rotary_position_embedding"
# Rows per program: a 4K-element tile on the GPU (head_dim 128: 32 rows); the interpreter takes 16K.
GPU_TILE, INTERP_TILE = 4096, 1 << 14


@triton.jit
def rope_kernel(
    x_ptr, cos_ptr, sin_ptr, out_ptr,
    n_rows, n_heads, seq_len, half, stride_xb, stride_xs, stride_xh, stride_xd,
    stride_cb, stride_cs, stride_cd, stride_sb, stride_ss, stride_sd,
    INTERLEAVED: tl.constexpr, INVERSE: tl.constexpr, COMPUTE: tl.constexpr, INT64: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_H: tl.constexpr,
):
    """out[m, pair j] = rotate(x[m, pair j], +-angle[b(m), s(m), j]) for BLOCK_M rows m of (batch, seq,
    head); out contiguous (n_rows, 2 * half). INVERSE rotates by -angle (the backward)."""
    pid = tl.program_id(0)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        pid = pid.to(tl.int64)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    offs = tl.arange(0, BLOCK_H)
    mask = (rows < n_rows)[:, None] & (offs < half)[None, :]
    head = rows % n_heads
    pos = (rows // n_heads) % seq_len
    batch = rows // (n_heads * seq_len)
    c = tl.load(cos_ptr + (batch * stride_cb + pos * stride_cs)[:, None] + offs[None, :] * stride_cd, mask=mask,
                other=0).to(COMPUTE)
    s = tl.load(sin_ptr + (batch * stride_sb + pos * stride_ss)[:, None] + offs[None, :] * stride_sd, mask=mask,
                other=0).to(COMPUTE)
    if INTERLEAVED:
        first = offs * 2
        second = first + 1
    else:
        first = offs
        second = offs + half
    x_rows = x_ptr + (batch * stride_xb + pos * stride_xs + head * stride_xh)[:, None]
    x1 = tl.load(x_rows + first[None, :] * stride_xd, mask=mask, other=0).to(COMPUTE)
    x2 = tl.load(x_rows + second[None, :] * stride_xd, mask=mask, other=0).to(COMPUTE)
    if INVERSE:  # the same products, subtracted where the forward adds: no negation to flip a zero's sign
        out1 = x1 * c + x2 * s
        out2 = x2 * c - x1 * s
    else:
        out1 = x1 * c - x2 * s
        out2 = x2 * c + x1 * s
    out_rows = out_ptr + rows[:, None] * (2 * half)
    tl.store(out_rows + first[None, :], out1.to(out_ptr.dtype.element_ty), mask=mask)
    tl.store(out_rows + second[None, :], out2.to(out_ptr.dtype.element_ty), mask=mask)


_launcher = Launcher(rope_kernel)


def _check(x, cos, sin):
    if x.dim() < 3 or x.shape[-1] % 2:
        raise ValueError(f"x must be (..., seq_len, n_heads, head_dim) with an even head_dim, got {list(x.shape)}")
    want = [x.shape[-3], x.shape[-1] // 2]
    batch = x.shape[:-3].numel()
    for label, t in (("cos", cos), ("sin", sin)):
        if list(t.shape[-2:]) != want or t.dim() > 3 or (t.dim() == 3 and t.shape[0] not in (1, batch)):
            raise ValueError(f"{label} must have shape (seq_len, head_dim / 2) = {want} or (batch, *{want}) with "
                             f"batch {batch} (or 1), got {list(t.shape)}")


def _angles3(t):
    """cos or sin as (batch or 1, seq_len, half) strides; a batch of 1 is broadcast (stride 0)."""
    if t.dim() == 2:
        return 0, *t.stride()
    return (0 if t.shape[0] == 1 else t.stride(0)), t.stride(1), t.stride(2)


def rotate(x, cos, sin, interleaved, inverse):
    """The kernel: x (checked) rotated by +-angle, a new contiguous tensor of x's shape."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    if out.numel() == 0:
        return out
    seq_len, n_heads, head_dim = x.shape[-3:]
    try:
        x4 = x.view(-1, seq_len, n_heads, head_dim)
    except RuntimeError:  # leading dims that do not merge
        x4 = x.reshape(-1, seq_len, n_heads, head_dim)
    n_rows, half = x.numel() // head_dim, head_dim // 2
    block_h = next_power_of_2(half)
    tile = INTERP_TILE if triton.knobs.runtime.interpret else GPU_TILE
    block_m = min(next_power_of_2(n_rows), max(1, tile // (2 * block_h)))
    _launcher((cdiv(n_rows, block_m),), x4, cos, sin, out, n_rows, n_heads, seq_len, half, *x4.stride(),
              *_angles3(cos), *_angles3(sin), bool(interleaved), inverse, compute_dtype(x.dtype), needs_int64(x4, out),
              block_m, block_h, num_warps=4 if block_m * block_h <= 1024 else 8)
    return out


def _rotate_back(dy, cos, sin, interleaved):
    return rotate(dy, cos, sin, interleaved, True)


# The backward (the rotation by -angle) as an operator of gems' own (gems/runtime/operators.py), which the native
# layer replays.
rotary_backward = operators.backward("rotary_position_embedding_backward",
                                     "(Tensor dy, Tensor cos, Tensor sin, bool interleaved) -> Tensor", _rotate_back)


# backward() below as data, for the native layer's C++ node (gems/runtime/native_backward.py).
@native_backward("gems::rotary_position_embedding_backward", args=(Grad(0), Saved(0), Saved(1), Attr("interleaved")),
                 grads=(Result(0), None, None, None))
class _Rotary(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, cos, sin, interleaved):
        ctx.save_for_backward(cos, sin)
        ctx.interleaved = interleaved
        return rotate(x, cos, sin, interleaved, False)

    @staticmethod
    @once_differentiable  # the backward operator has no backward of its own
    def backward(ctx, grad_out):
        cos, sin = ctx.saved_tensors
        return rotary_backward(grad_out, cos, sin, ctx.interleaved), None, None, None


def reference(x, cos, sin, interleaved=False):
    _check(x, cos, sin)
    c, s = cos.unsqueeze(-2), sin.unsqueeze(-2)  # over the heads
    if cos.dim() == 3:  # per sequence: (batch, seq, 1, half) against x's leading dims
        c, s = (t.view(*x.shape[:-3], *t.shape[1:]) if t.shape[0] != 1 else t[0] for t in (c, s))
    if interleaved:
        x1, x2 = x[..., 0::2], x[..., 1::2]
        return torch.stack((x1 * c - x2 * s, x2 * c + x1 * s), dim=-1).flatten(-2)
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((x1 * c - x2 * s, x2 * c + x1 * s), dim=-1)


def _apply_rotary_position_embedding(x, cos, sin, interleaved=False):
    _check(x, cos, sin)
    if x.dtype not in FLOATS or cos.dtype != x.dtype or sin.dtype != x.dtype:
        raise Fallback("the kernel takes x, cos and sin of one floating dtype")
    if needs_grad(cos, sin):
        raise Fallback("cos and sin that require grad: the kernels give only x its gradient")
    if needs_grad(x):
        return _Rotary.apply(x, cos, sin, bool(interleaved))
    return rotate(x, cos, sin, interleaved, False)


apply_rotary_position_embedding = api_function(
    NAME, _apply_rotary_position_embedding, reference, differentiable=True,
    schema="(Tensor x, Tensor cos, Tensor sin, bool interleaved=False) -> Tensor")

SPECS = [
    OpSpec(
        name="apply_rotary_position_embedding", family="fused", impls={},
        api={NAME: apply_rotary_position_embedding}, reference=reference,
        call=apply_rotary_position_embedding,
        samples=lazy("gems.testing.samples_fused", "rope_samples"),
        dtypes=FLOATS,
        perf=PerfSpec(inputs=lazy("gems.testing.samples_fused", "rope_inputs"), shapes="rope",
                      bytes=lazy("gems.testing.samples_norm", "io_bytes")),
    ),
]
