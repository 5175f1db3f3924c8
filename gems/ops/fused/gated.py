"""The gated activations' kernels and autograd, shared by silu_and_mul and gelu_and_mul (a family
helper: the activation is a constexpr, so each operator still compiles to its own kernels).

    y = act(a) * b,   a, b: the two halves of x's last dim (x = [a | b]), or a gate and an up tensor
    backward: da = dy * b * act'(a),   db = dy * act(a)

Forward: a and b read once, y written once. Backward: dy, a and b read once, da and db written once (for
halves, into the two halves of one dx); the forward saves only its inputs. act and act' are computed in
fp32 (fp64 for fp64) and each result rounded once. act' as ATen's silu_backward and gelu_backward:

    silu' = s * (1 + a * (1 - s)), s = sigmoid(a);   gelu' = Phi(a) + a * phi(a);
    gelu tanh' = 0.5 * (1 + t) + 0.5 * a * (1 - t^2) * k * (1 + 3 * 0.044715 * a^2),
                 t = tanh(k * (a + 0.044715 * a^3)), k = sqrt(2 / pi)
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from torch.autograd.function import once_differentiable

from gems.ops.fused.api import needs_grad
from gems.ops.normalization.rows import as_rows, compute_dtype, needs_int64
from gems.runtime import operators
from gems.runtime.launch import Launcher, cdiv, next_power_of_2
from gems.runtime.native_backward import Attr, Grad, Result, Saved, native_backward

SILU, GELU, GELU_TANH = 0, 1, 2
# GPU: 2048-element tiles, 8 values per thread at 8 warps; the interpreter takes 16K per program.
GPU_TILE, INTERP_TILE = 2048, 1 << 14


@triton.jit
def _tanh(u):
    """tanh(u) = 2 / (1 + exp(-2u)) - 1: saturates to +-1 without NaN (no libdevice in the interpreter)."""
    return 2.0 / (1.0 + tl.exp(-2.0 * u)) - 1.0


@triton.jit
def _activation(a, ACT: tl.constexpr):
    if ACT == 0:  # silu: a * sigmoid(a)
        return a / (1.0 + tl.exp(-a))
    elif ACT == 1:  # gelu: a * Phi(a)
        return 0.5 * a * (1.0 + tl.erf(a * 0.7071067811865476))
    else:  # gelu, tanh approximation
        u = 0.7978845608028654 * (a + 0.044715 * a * a * a)
        return 0.5 * a * (2.0 / (1.0 + tl.exp(-2.0 * u)))


@triton.jit
def _activation_grad(a, ACT: tl.constexpr):
    """(act(a), act'(a))."""
    if ACT == 0:
        s = 1.0 / (1.0 + tl.exp(-a))
        return a * s, s * (1.0 + a * (1.0 - s))
    elif ACT == 1:
        cdf = 0.5 * (1.0 + tl.erf(a * 0.7071067811865476))
        pdf = tl.exp(-0.5 * a * a) * 0.3989422804014327
        return a * cdf, cdf + a * pdf
    else:
        t = _tanh(0.7978845608028654 * (a + 0.044715 * a * a * a))
        grad = 0.5 * (1.0 + t) + 0.5 * a * (1.0 - t * t) * 0.7978845608028654 * (1.0 + 0.134145 * a * a)
        return 0.5 * a * (1.0 + t), grad


@triton.jit
def _tile(n_rows, d, BLOCK_M: tl.constexpr, BLOCK_D: tl.constexpr, INT64: tl.constexpr):
    pid_m = tl.program_id(0)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        pid_m = pid_m.to(tl.int64)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    return rows, offs, (rows < n_rows)[:, None] & (offs < d)[None, :]


@triton.jit
def gated_kernel(
    a_ptr, b_ptr, y_ptr, n_rows, d, stride_am, stride_an, stride_bm, stride_bn,
    ACT: tl.constexpr, COMPUTE: tl.constexpr, INT64: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_D: tl.constexpr,
):
    """y[m, j] = act(a[m, j]) * b[m, j] for a BLOCK_M x BLOCK_D tile; y contiguous (n_rows, d)."""
    rows, offs, mask = _tile(n_rows, d, BLOCK_M, BLOCK_D, INT64)
    a = tl.load(a_ptr + rows[:, None] * stride_am + offs[None, :] * stride_an, mask=mask, other=0).to(COMPUTE)
    b = tl.load(b_ptr + rows[:, None] * stride_bm + offs[None, :] * stride_bn, mask=mask, other=0).to(COMPUTE)
    y = _activation(a, ACT) * b
    tl.store(y_ptr + rows[:, None] * d + offs[None, :], y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def gated_backward_kernel(
    dy_ptr, a_ptr, b_ptr, da_ptr, db_ptr, n_rows, d, stride_dym, stride_dyn, stride_am, stride_an,
    stride_bm, stride_bn, stride_dam, stride_dbm,
    ACT: tl.constexpr, COMPUTE: tl.constexpr, INT64: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_D: tl.constexpr,
):
    """da = dy * b * act'(a), db = dy * act(a) for a tile; da and db rows of stride_dam, stride_dbm."""
    rows, offs, mask = _tile(n_rows, d, BLOCK_M, BLOCK_D, INT64)
    dy = tl.load(dy_ptr + rows[:, None] * stride_dym + offs[None, :] * stride_dyn, mask=mask, other=0).to(COMPUTE)
    a = tl.load(a_ptr + rows[:, None] * stride_am + offs[None, :] * stride_an, mask=mask, other=0).to(COMPUTE)
    b = tl.load(b_ptr + rows[:, None] * stride_bm + offs[None, :] * stride_bn, mask=mask, other=0).to(COMPUTE)
    act, act_grad = _activation_grad(a, ACT)
    tl.store(da_ptr + rows[:, None] * stride_dam + offs[None, :], (dy * b * act_grad).to(da_ptr.dtype.element_ty),
             mask=mask)
    tl.store(db_ptr + rows[:, None] * stride_dbm + offs[None, :], (dy * act).to(db_ptr.dtype.element_ty), mask=mask)


_forward = Launcher(gated_kernel)
_backward = Launcher(gated_backward_kernel)


def _grid(n_rows, d):
    """(grid, BLOCK_M, BLOCK_D, warps) for n_rows x d tiles."""
    tile = INTERP_TILE if triton.knobs.runtime.interpret else GPU_TILE
    block_d = min(next_power_of_2(d), tile)
    block_m = min(next_power_of_2(n_rows), max(1, tile // block_d))
    return (cdiv(n_rows, block_m), cdiv(d, block_d)), block_m, block_d, 4 if block_m * block_d <= 1024 else 8


def _operands(x, up):
    """(a, b) as (n_rows, d) views: x's halves, or x (the gate) and up."""
    if up is None:
        x2 = as_rows(x, x.shape[-1])
        d = x2.shape[1] // 2
        return x2[:, :d], x2[:, d:]
    return as_rows(x, x.shape[-1]), as_rows(up, up.shape[-1])


def _gated_forward(x, up, act):
    a, b = _operands(x, up)
    n_rows, d = a.shape
    out = x.new_empty((*x.shape[:-1], d))
    if out.numel() == 0:
        return out
    grid, block_m, block_d, warps = _grid(n_rows, d)
    _forward(grid, a, b, out, n_rows, d, *a.stride(), *b.stride(), act, compute_dtype(x.dtype), needs_int64(a, b),
             block_m, block_d, num_warps=warps)
    return out


def _gated_backward(dy, x, up, act):
    """(dx, dup): dx of x's shape (its halves da, db when up is None), dup of up's (None without up)."""
    a, b = _operands(x, up)
    n_rows, d = a.shape
    dx = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    dup = torch.empty(up.shape, dtype=up.dtype, device=up.device) if up is not None else None
    if dy.numel() == 0:
        return dx, dup
    dy2 = as_rows(dy, d)
    da = dx.view(n_rows, -1)
    db = da[:, d:] if up is None else dup.view(n_rows, d)
    grid, block_m, block_d, warps = _grid(n_rows, d)
    _backward(grid, dy2, a, b, da, db, n_rows, d, *dy2.stride(), *a.stride(), *b.stride(), da.stride(0), db.stride(0),
              act, compute_dtype(x.dtype), needs_int64(x, dy2, b), block_m, block_d, num_warps=warps)
    return dx, dup


# The backward as an operator of gems' own (gems/runtime/operators.py), which the native layer replays.
gated_backward = operators.backward("gated_backward", "(Tensor dy, Tensor x, Tensor? up, int act) -> (Tensor, Tensor)",
                                    _gated_backward)


# backward() below as data, for the native layer's C++ node (gems/runtime/native_backward.py).
@native_backward("gems::gated_backward", args=(Grad(0), Saved(0), Saved(1), Attr("act")),
                 grads=(Result(0), Result(1), None))
class _Gated(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, up, act):
        ctx.save_for_backward(x, up)
        ctx.act = act
        return _gated_forward(x, up, act)

    @staticmethod
    @once_differentiable  # the backward operator has no backward of its own
    def backward(ctx, dy):
        x, up = ctx.saved_tensors
        dx, dup = gated_backward(dy, x, up, ctx.act)
        return dx, dup, None


def gated(x, up, act: int):
    """act(a) * b of the halves of x's last dim (up None) or of x and up; checked by the caller."""
    if needs_grad(x, up):
        return _Gated.apply(x, up, act)
    return _gated_forward(x, up, act)
