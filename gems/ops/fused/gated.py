"""The gated activations' kernel, shared by silu_and_mul and gelu_and_mul (a family helper: the
activation is a constexpr, so each operator still compiles to its own single kernel).

    y[..., j] = act(x[..., j]) * x[..., d + j],   d = x.shape[-1] / 2

x is read once and y written once; act is computed in fp32 (fp64 for fp64) and y rounded once.
"""

from __future__ import annotations

import triton
import triton.language as tl

from gems.ops.normalization.rows import as_rows, compute_dtype, needs_int64
from gems.runtime.launch import Launcher, cdiv, next_power_of_2

SILU, GELU, GELU_TANH = 0, 1, 2
# GPU: 2048-element tiles, 8 values per thread at 8 warps; the interpreter takes 16K per program.
GPU_TILE, INTERP_TILE = 2048, 1 << 14


@triton.jit
def _activation(a, ACT: tl.constexpr):
    if ACT == 0:  # silu: a * sigmoid(a)
        return a / (1.0 + tl.exp(-a))
    elif ACT == 1:  # gelu: a * Phi(a)
        return 0.5 * a * (1.0 + tl.erf(a * 0.7071067811865476))
    else:  # gelu, tanh approximation; tanh(u) = 2 / (1 + exp(-2u)) - 1 saturates to +-1 without NaN
        u = 0.7978845608028654 * (a + 0.044715 * a * a * a)
        return 0.5 * a * (2.0 / (1.0 + tl.exp(-2.0 * u)))


@triton.jit
def gated_kernel(
    x_ptr, y_ptr, n_rows, d, stride_xm, stride_xn,
    ACT: tl.constexpr, COMPUTE: tl.constexpr, INT64: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_D: tl.constexpr,
):
    """y[m, j] = act(x[m, j]) * x[m, d + j] for a BLOCK_M x BLOCK_D tile; y contiguous (n_rows, d)."""
    pid_m = tl.program_id(0)
    pid_d = tl.program_id(1)
    if INT64:
        pid_m = pid_m.to(tl.int64)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
    mask = (rows < n_rows)[:, None] & (offs < d)[None, :]
    x_tile = x_ptr + rows[:, None] * stride_xm + offs[None, :] * stride_xn
    a = tl.load(x_tile, mask=mask, other=0).to(COMPUTE)
    b = tl.load(x_tile + d * stride_xn, mask=mask, other=0).to(COMPUTE)
    y = _activation(a, ACT) * b
    tl.store(y_ptr + rows[:, None] * d + offs[None, :], y.to(y_ptr.dtype.element_ty), mask=mask)


_launcher = Launcher(gated_kernel)


def gated(x, act: int):
    """act(first half) * second half of x's last dim; x of a floating dtype with an even last dim."""
    n = x.shape[-1]
    d = n // 2
    out = x.new_empty((*x.shape[:-1], d))
    x2 = as_rows(x, n)
    n_rows = x2.shape[0]
    if out.numel() == 0:
        return out
    tile = INTERP_TILE if triton.knobs.runtime.interpret else GPU_TILE
    block_d = min(next_power_of_2(d), tile)
    block_m = min(next_power_of_2(n_rows), max(1, tile // block_d))
    warps = 4 if block_m * block_d <= 1024 else 8
    _launcher((cdiv(n_rows, block_m), cdiv(d, block_d)), x2, out, n_rows, d, x2.stride(0), x2.stride(1), act,
              compute_dtype(x.dtype), needs_int64(x2), block_m, block_d, num_warps=warps)
    return out
