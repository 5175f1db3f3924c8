"""weight_norm: ``_weight_norm_interface`` and ``_weight_norm_interface_backward`` (what torch._weight_norm,
torch.nn.utils.weight_norm's parametrization, reaches for dim 0 and the last dim; torch's composite
handles the other dims itself).

v is viewed contiguous as (n_kept, n_red) pairs: dim 0 keeps the first dim (a norm per row), the last
dim keeps the last (a norm per column). For each kept index k:

    norm[k] = sqrt(sum over the others of v^2),   w = v * g[k] / norm[k]
    backward: s = sum(grad_w * v),  grad_g = s / norm,  grad_v = g / norm * (grad_w - v * s / norm^2)

One kernel each way, two sweeps over v (the sum, then the result). norms come back in fp32 for
fp16/bf16 (ATen's accumulate type), else in v's dtype.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from gems.dtypes import ATEN_NAMES, FLOATS
from gems.ops.normalization.rows import compute_dtype, needs_int64
from gems.ops.reduction.planning import reduce_sum
from gems.runtime.launch import Launcher, cdiv, next_power_of_2
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, lazy

# Tiles (kept x reduced): 4096 elements on the GPU, 16K under the interpreter.
GPU_TILE, INTERP_TILE = 4096, 1 << 14

# --------------------------------------------------------------------------- kernels


@triton.jit
def _sqrt_rn(v):
    if v.dtype == tl.float64:
        return tl.sqrt(v)
    else:
        return tl.sqrt_rn(v)


@triton.jit
def _tile_offsets(kept, red0, n_kept, n_red, stride_kept, stride_red, BLOCK_R: tl.constexpr):
    offs_r = red0 + tl.arange(0, BLOCK_R)
    mask = (kept < n_kept)[:, None] & (offs_r < n_red)[None, :]
    return kept[:, None] * stride_kept + offs_r[None, :] * stride_red, mask


@triton.jit
def _weight_norm_kernel(
    v_ptr, g_ptr, w_ptr, norm_ptr, n_kept, n_red, stride_kept, stride_red,
    COMPUTE: tl.constexpr, INT64: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_R: tl.constexpr,
):
    """norm[k] and w[k, :] = v[k, :] * g[k] / norm[k] for BLOCK_K kept indices (v, w share strides)."""
    pid = tl.program_id(0)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        pid = pid.to(tl.int64)
    kept = pid * BLOCK_K + tl.arange(0, BLOCK_K)
    acc = tl.full([BLOCK_K, BLOCK_R], 0, COMPUTE)
    for r in range(0, n_red, BLOCK_R):
        offs, mask = _tile_offsets(kept, r, n_kept, n_red, stride_kept, stride_red, BLOCK_R)
        v = tl.load(v_ptr + offs, mask=mask, other=0).to(COMPUTE)
        acc += v * v
    norm = _sqrt_rn(reduce_sum(acc, 1))
    mask_k = kept < n_kept
    tl.store(norm_ptr + kept, norm.to(norm_ptr.dtype.element_ty), mask=mask_k)
    scale = tl.load(g_ptr + kept, mask=mask_k, other=0).to(COMPUTE) / norm
    for r in range(0, n_red, BLOCK_R):
        offs, mask = _tile_offsets(kept, r, n_kept, n_red, stride_kept, stride_red, BLOCK_R)
        v = tl.load(v_ptr + offs, mask=mask, other=0).to(COMPUTE)
        tl.store(w_ptr + offs, (v * scale[:, None]).to(w_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _weight_norm_backward_kernel(
    gw_ptr, v_ptr, g_ptr, norm_ptr, gv_ptr, gg_ptr, n_kept, n_red, stride_kept, stride_red,
    COMPUTE: tl.constexpr, INT64: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_R: tl.constexpr,
):
    """grad_g[k] and grad_v[k, :] for BLOCK_K kept indices (grad_w, v, grad_v share strides)."""
    pid = tl.program_id(0)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        pid = pid.to(tl.int64)
    kept = pid * BLOCK_K + tl.arange(0, BLOCK_K)
    mask_k = kept < n_kept
    acc = tl.full([BLOCK_K, BLOCK_R], 0, COMPUTE)
    for r in range(0, n_red, BLOCK_R):
        offs, mask = _tile_offsets(kept, r, n_kept, n_red, stride_kept, stride_red, BLOCK_R)
        gw = tl.load(gw_ptr + offs, mask=mask, other=0).to(COMPUTE)
        v = tl.load(v_ptr + offs, mask=mask, other=0).to(COMPUTE)
        acc += gw * v
    s = reduce_sum(acc, 1)
    norm = tl.load(norm_ptr + kept, mask=mask_k, other=1).to(COMPUTE)
    g = tl.load(g_ptr + kept, mask=mask_k, other=0).to(COMPUTE)
    tl.store(gg_ptr + kept, (s / norm).to(gg_ptr.dtype.element_ty), mask=mask_k)
    scale = g / norm
    proj = s / (norm * norm)
    for r in range(0, n_red, BLOCK_R):
        offs, mask = _tile_offsets(kept, r, n_kept, n_red, stride_kept, stride_red, BLOCK_R)
        gw = tl.load(gw_ptr + offs, mask=mask, other=0).to(COMPUTE)
        v = tl.load(v_ptr + offs, mask=mask, other=0).to(COMPUTE)
        gv = scale[:, None] * (gw - v * proj[:, None])
        tl.store(gv_ptr + offs, gv.to(gv_ptr.dtype.element_ty), mask=mask)


_forward = Launcher(_weight_norm_kernel)
_backward = Launcher(_weight_norm_backward_kernel)


# --------------------------------------------------------------------------- plans


def _layout(v, dim):
    """(n_kept, n_red, stride_kept, stride_red, BLOCK_K, BLOCK_R, num_warps) of contiguous v."""
    if dim not in (0, v.dim() - 1):
        raise Fallback("ATen's fused kernel takes only the first or the last dim")
    if dim == 0:
        n_kept = v.shape[0] if v.dim() else 1
        n_red = v.numel() // max(n_kept, 1)
        strides = (n_red, 1)
    else:
        n_kept = v.shape[-1]
        n_red = v.numel() // max(n_kept, 1)
        strides = (1, n_kept)
    tile = INTERP_TILE if triton.knobs.runtime.interpret else GPU_TILE
    if dim == 0:  # a row each: the reduced elements are contiguous
        block_r = min(next_power_of_2(n_red), tile)
        block_k = min(next_power_of_2(n_kept), max(1, tile // block_r))
    else:  # consecutive kept columns are contiguous: 32 or more of them per tile row
        block_k = min(next_power_of_2(n_kept), max(32, tile // next_power_of_2(n_red)), tile)
        block_r = min(next_power_of_2(n_red), max(1, tile // block_k))
    return n_kept, n_red, *strides, block_k, block_r, 8 if block_k * block_r >= 4096 else 4


def _norm_dtype(v):
    return torch.float32 if v.dtype in (torch.float16, torch.bfloat16) else v.dtype


def _check(v, dim, *others):
    if v.dtype not in FLOATS:
        raise Fallback("weight norm of non-float dtypes is left to ATen (which has no kernel for them)")
    for t in others:  # ATen's kernels read every operand as v's dtype
        if t.dtype != v.dtype:
            found = ATEN_NAMES.get(t.dtype, t.dtype)
            raise RuntimeError(f"expected scalar type {ATEN_NAMES[v.dtype]} but found {found}")
    if v.dim() == 0 and dim in (0, -1):  # ATen reads v.size(dim)
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")


# --------------------------------------------------------------------------- ATen overloads


def weight_norm_interface(v, g, dim=0):
    _check(v, dim, g)
    if v.dim() == 0:
        raise Fallback("a 0-d v with another dim: ATen's checks decide")
    n_kept, n_red, stride_kept, stride_red, block_k, block_r, warps = _layout(v, dim)
    if g.numel() != n_kept:
        raise Fallback("a g whose size is not v's size along dim: ATen's checks decide")
    v = v.contiguous()
    w = torch.empty_like(v)
    norms = torch.empty(g.shape, dtype=_norm_dtype(v), device=v.device)
    if n_kept and n_red:
        _forward((cdiv(n_kept, block_k),), v, g.contiguous(), w, norms, n_kept, n_red, stride_kept, stride_red,
                 compute_dtype(v.dtype), needs_int64(v), block_k, block_r, num_warps=warps)
    elif n_kept:
        raise Fallback("norms of nothing")
    return w, norms


def weight_norm_interface_backward(grad_w, saved_v, saved_g, saved_norms, dim):
    _check(saved_v, dim, grad_w, saved_g)
    if saved_v.dim() == 0 or grad_w.shape != saved_v.shape:
        raise Fallback("shapes ATen's checks decide")
    n_kept, n_red, stride_kept, stride_red, block_k, block_r, warps = _layout(saved_v, dim)
    v, grad_w = saved_v.contiguous(), grad_w.contiguous()
    grad_v = torch.empty_like(v)
    grad_g = torch.empty(saved_g.shape, dtype=saved_g.dtype, device=v.device)
    if n_kept and n_red:
        _backward((cdiv(n_kept, block_k),), grad_w, v, saved_g.contiguous(), saved_norms.contiguous(), grad_v, grad_g,
                  n_kept, n_red, stride_kept, stride_red, compute_dtype(v.dtype), needs_int64(v), block_k, block_r,
                  num_warps=warps)
    elif n_kept:
        raise Fallback("norms of nothing")
    return grad_v, grad_g


SPECS = [
    OpSpec(
        name="weight_norm", family="normalization",
        impls={"_weight_norm_interface": weight_norm_interface,
               "_weight_norm_interface_backward": weight_norm_interface_backward},
        call=torch._weight_norm,
        samples=lazy("gems.testing.samples_norm", "weight_norm_samples"),
        dtypes=FLOATS,
        tolerance="reduction",
        # The float64 oracle runs on CPU on every vendor.
        skips={("*", "*", "empty"): "ATen's CPU _weight_norm_interface kills the process (SIGFPE, integer division "
                                    "by zero) for an empty v (torch 2.13); gems returns empty results"},
    ),
]
