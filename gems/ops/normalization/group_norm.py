"""group_norm: ``native_group_norm`` and ``native_group_norm_backward`` (what torch.nn.functional.group_norm
and its autograd reach).

x is (N, C, *) contiguous, seen as N * group rows of (C / group) * HxW elements; row (n, g) is
normalized on its own and column j of it scaled by the weight and bias of channel g * C / group + j / HxW:

    forward: the row kernel of gems/ops/normalization/rows.py with per-channel (GROUPED) weight and bias
    dx:      per row, xhat = (x - mean) * rstd, v = w[channel] * dy,
             dx = rstd * (v - xhat * mean(v * xhat) - mean(v))             (_group_dx_kernel)
    dw, db:  per channel, sums over n and HxW of dy * xhat and dy          (_group_dwdb_kernel)

mean and rstd are (N, group) in the input's dtype, as ATen returns them on CPU and CUDA.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from gems.dtypes import FLOATS
from gems.ops.normalization.rows import compute_dtype, needs_int64, row_config, row_forward
from gems.ops.reduction.planning import reduce_sum
from gems.runtime.launch import Launcher, cdiv, next_power_of_2
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, lazy

# Channels' (n, HxW) tiles in the dw/db kernel: 16 x 256 on the GPU (16 fp32 values per thread at 8
# warps); the interpreter takes whole small tensors per program.
GPU_TILE_N, GPU_TILE_HW = 16, 256
INTERP_TILE_N, INTERP_TILE_HW = 64, 1024

# --------------------------------------------------------------------------- kernels


@triton.jit
def _group_dx_tile(dy_ptr, x_ptr, w_ptr, rows, offs, mask, mean, rstd, n_groups, cpg, hw, HAS_W: tl.constexpr,
                   COMPUTE: tl.constexpr):
    """(xhat, w * dy) of one tile of rows (n, g) and their columns offs."""
    at = rows[:, None] * (cpg * hw) + offs[None, :]
    dy = tl.load(dy_ptr + at, mask=mask, other=0).to(COMPUTE)
    x = tl.load(x_ptr + at, mask=mask, other=0).to(COMPUTE)
    xhat = tl.where(mask, (x - mean[:, None]) * rstd[:, None], 0)
    if HAS_W:
        channel = (rows % n_groups)[:, None] * cpg + offs[None, :] // hw
        dy = dy * tl.load(w_ptr + channel, mask=mask, other=0).to(COMPUTE)
    return xhat, dy


@triton.jit
def _group_dx_kernel(
    dy_ptr, x_ptr, w_ptr, mean_ptr, rstd_ptr, dx_ptr, n_rows, n_groups, cpg, hw,
    HAS_W: tl.constexpr, COMPUTE: tl.constexpr, INT64: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    """dx of BLOCK_M rows (n, g): a sweep for the two row sums, a sweep for dx (all contiguous)."""
    pid = tl.program_id(0)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        pid = pid.to(tl.int64)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    mask_m = rows < n_rows
    n_cols = cpg * hw
    mean = tl.load(mean_ptr + rows, mask=mask_m, other=0).to(COMPUTE)
    rstd = tl.load(rstd_ptr + rows, mask=mask_m, other=0).to(COMPUTE)
    acc1 = tl.full([BLOCK_M, BLOCK_N], 0, COMPUTE)
    acc2 = tl.full([BLOCK_M, BLOCK_N], 0, COMPUTE)
    for k in range(0, n_cols, BLOCK_N):
        offs = k + tl.arange(0, BLOCK_N)
        mask = mask_m[:, None] & (offs[None, :] < n_cols)
        xhat, v = _group_dx_tile(dy_ptr, x_ptr, w_ptr, rows, offs, mask, mean, rstd, n_groups, cpg, hw, HAS_W,
                                 COMPUTE)
        acc1 += v * xhat
        acc2 += v
    c1 = reduce_sum(acc1, 1) / n_cols
    c2 = reduce_sum(acc2, 1) / n_cols
    for k in range(0, n_cols, BLOCK_N):
        offs = k + tl.arange(0, BLOCK_N)
        mask = mask_m[:, None] & (offs[None, :] < n_cols)
        xhat, v = _group_dx_tile(dy_ptr, x_ptr, w_ptr, rows, offs, mask, mean, rstd, n_groups, cpg, hw, HAS_W,
                                 COMPUTE)
        dx = (v - xhat * c1[:, None] - c2[:, None]) * rstd[:, None]
        tl.store(dx_ptr + rows[:, None] * n_cols + offs[None, :], dx.to(dx_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _group_dwdb_kernel(
    dy_ptr, x_ptr, mean_ptr, rstd_ptr, dw_ptr, db_ptr, n_batch, n_channels, n_groups, hw,
    DW: tl.constexpr, DB: tl.constexpr, COMPUTE: tl.constexpr, INT64: tl.constexpr, BLOCK_N: tl.constexpr,
    BLOCK_HW: tl.constexpr,
):
    """dw[c] = sum over n, hw of dy * (x - mean[n, g]) * rstd[n, g], db[c] = sum of dy; one channel per program."""
    c = tl.program_id(0)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        c = c.to(tl.int64)
    g = c // (n_channels // n_groups)
    acc_w = tl.full([BLOCK_N, BLOCK_HW], 0, COMPUTE)
    acc_b = tl.full([BLOCK_N, BLOCK_HW], 0, COMPUTE)
    for n0 in range(0, n_batch, BLOCK_N):
        ns = n0 + tl.arange(0, BLOCK_N)
        mask_n = ns < n_batch
        mean = tl.load(mean_ptr + ns * n_groups + g, mask=mask_n, other=0).to(COMPUTE)
        rstd = tl.load(rstd_ptr + ns * n_groups + g, mask=mask_n, other=0).to(COMPUTE)
        for k in range(0, hw, BLOCK_HW):
            offs = k + tl.arange(0, BLOCK_HW)
            mask = mask_n[:, None] & (offs[None, :] < hw)
            at = (ns[:, None] * n_channels + c) * hw + offs[None, :]
            dy = tl.load(dy_ptr + at, mask=mask, other=0).to(COMPUTE)
            x = tl.load(x_ptr + at, mask=mask, other=0).to(COMPUTE)
            acc_w += tl.where(mask, dy * (x - mean[:, None]) * rstd[:, None], 0)
            acc_b += dy
    if DW:
        tl.store(dw_ptr + c, reduce_sum(reduce_sum(acc_w, 1), 0).to(dw_ptr.dtype.element_ty))
    if DB:
        tl.store(db_ptr + c, reduce_sum(reduce_sum(acc_b, 1), 0).to(db_ptr.dtype.element_ty))


_dx_launcher = Launcher(_group_dx_kernel)
_dwdb_launcher = Launcher(_group_dwdb_kernel)


# --------------------------------------------------------------------------- checks


def _check(x, weight, bias, C, group):
    if group <= 0:
        raise RuntimeError(f"Expected num groups to be greater than 0, got {group}")
    if C % group:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(x.shape)} and num_groups={group}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dim() != 1 or t.numel() != C):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, "
                               f"but got {name} of shape {list(t.shape)} and input of shape {list(x.shape)}")
    if x.dtype not in FLOATS or any(t is not None and t.dtype != x.dtype for t in (weight, bias)):
        raise Fallback("group norm of mixed or non-float dtypes is left to ATen")
    if not x.is_contiguous():
        raise Fallback("a non-contiguous input (ATen's memory-format rules decide)")


# --------------------------------------------------------------------------- ATen overloads


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    _check(input, weight, bias, C, group)
    if input.numel() != N * C * HxW:
        raise RuntimeError(f"input of {input.numel()} elements is not N * C * HxW = {N} * {C} * {HxW}")
    n_cols = (C // group) * HxW
    if n_cols == 0:
        raise Fallback("groups of zero elements")
    y, _, mean, rstd = row_forward(input.view(N * group, n_cols), eps, rms=False, weight=weight, bias=bias,
                                   stats_dtype=input.dtype, groups=(group, HxW))
    return y.view(input.shape), mean.view(N, group), rstd.view(N, group)


def native_group_norm_backward(grad_out, input, mean, rstd, weight, N, C, HxW, group, output_mask):
    _check(input, weight, None, C, group)
    if grad_out.dtype != input.dtype:
        raise Fallback("gradients of another dtype than the input")
    dy, x = grad_out.contiguous(), input
    cpg = C // group
    dx = dw = db = None
    if output_mask[0]:
        dx = torch.empty(input.shape, dtype=input.dtype, device=input.device)
    param_dtype = weight.dtype if weight is not None else input.dtype
    if output_mask[1]:
        dw = torch.empty(C, dtype=param_dtype, device=input.device)
    if output_mask[2]:
        db = torch.empty(C, dtype=param_dtype, device=input.device)
    if input.numel() == 0:
        return dx, dw.zero_() if dw is not None else None, db.zero_() if db is not None else None
    compute, int64 = compute_dtype(input.dtype), needs_int64(input)
    mean, rstd = mean.contiguous(), rstd.contiguous()
    if dx is not None:
        cfg = row_config(N * group, cpg * HxW)
        _dx_launcher((cdiv(N * group, cfg.block_m),), dy, x, x if weight is None else weight, mean, rstd, dx,
                     N * group, group, cpg, HxW, weight is not None, compute, int64, cfg.block_m, cfg.block_n,
                     num_warps=cfg.num_warps)
    if dw is not None or db is not None:
        interpret = triton.knobs.runtime.interpret
        block_n = min(next_power_of_2(N), INTERP_TILE_N if interpret else GPU_TILE_N)
        block_hw = min(next_power_of_2(HxW), INTERP_TILE_HW if interpret else GPU_TILE_HW)
        _dwdb_launcher((C,), dy, x, mean, rstd, x if dw is None else dw, x if db is None else db, N, C, group,
                       HxW, dw is not None, db is not None, compute, int64, block_n, block_hw,
                       num_warps=8 if block_n * block_hw >= 4096 else 4)
    return dx, dw, db


SPECS = [
    OpSpec(
        name="group_norm", family="normalization",
        impls={"native_group_norm": native_group_norm, "native_group_norm_backward": native_group_norm_backward},
        call=torch.nn.functional.group_norm,
        samples=lazy("gems.testing.samples_norm", "group_norm_samples"),
        dtypes=FLOATS,
        tolerance="reduction",
    ),
]
