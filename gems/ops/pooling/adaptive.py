"""The adaptive pooling kernels of _adaptive_avg_pool2d / adaptive_avg_pool2d.out and adaptive_max_pool2d, forward
and backward, and ATen's checks of their arguments.

Output (oh, ow) of an (H, W) -> (OH, OW) pooling reads rows [floor(oh * H / OH), ceil((oh + 1) * H / OH)) and
columns likewise (integer math, as ATen): the mean (fp32, fp64 for float64), or the largest element and its
flat index h * W + w (the first strict maximum in row-major window order, or the last NaN, as ATen's CUDA kernels).

Windows are vectors of the tile: a contiguous (NCHW) input is walked as (outputs x window elements), each row
reading its window's runs of consecutive columns (a global pooling reads each plane as one row); a channels-last
input as (window elements x channels) of one output pixel, each row a pixel's consecutive channels. Windows
longer than the tile are walked in chunks, the maximum carried from chunk to chunk in window order.

The backward is output-indexed (deterministic; ATen's CUDA kernels for contiguous tensors add atomically): the
outputs whose windows hold input row h are exactly [floor(h * OH / H), ceil((h + 1) * OH / H)), and likewise for
columns; each grad_input element sums their gradients divided by their window's height then width (avg), or
those whose index names it (max).
"""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import pointwise_config
from gems.ops.pointwise.shared import div_rn
from gems.ops.pooling.shared import ACC, channels_last, five_d, image_tile, needs_int64, tile_config, tile_walk
from gems.ops.reduction.planning import reduce_max, reduce_min, reduce_sum
from gems.runtime.launch import Launcher, cdiv, next_power_of_2

# Channels-last tiles: this many channels per row (a 128-byte line of fp16 or bf16).
CHANNELS_LAST_BLOCK_C = 64
UNROLLED_TAPS = 64  # backward: covering windows up to this many are unrolled
# NCHW tiles: at most this many outputs per program. On an H200 (triton 3.6, 2026-11-26) fp32 inputs gave wrong
# means with 256 or more rows of 4-element windows (fp16 right with the same tiles; cause not found), 128 right.
NCHW_BLOCK_R_MAX = 128


@triton.jit
def _window(o, n_out, n_in):
    """(first, end) of output coordinates o's window along an axis."""
    return (o * n_in) // n_out, ((o + 1) * n_in + n_out - 1) // n_out


@triton.jit
def _fold_max(best, pos, v, k, ok, AXIS: tl.constexpr):
    """Fold a chunk of window values v (positions k, valid ok) along AXIS into the running (best, pos): a NaN
    takes over (the last one), else the chunk's first maximum if it is larger, or if nothing came before."""
    nan = ok & (v != v)
    last_nan = reduce_max(tl.where(nan, k, -1), AXIS)
    plain = ok & (v == v)
    top = reduce_max(tl.where(plain, v, float("-inf")), AXIS)
    top_pos = reduce_min(tl.where(plain & (v == tl.expand_dims(top, AXIS)), k, 2**62), AXIS)
    had_nan = best != best
    take = (~had_nan) & (top_pos < 2**62) & ((top > best) | (pos < 0))
    best = tl.where(last_nan >= 0, float("nan"), tl.where(take, top, best))
    pos = tl.where(last_nan >= 0, last_nan, tl.where(take, top_pos, pos))
    return best, pos


@triton.jit
def _adaptive_kernel(x_ptr, y_ptr, idx_ptr, C, H, W, OH, OW, n_rows, tiles_c, sx_n, sx_c, sx_h, sx_w,
                     sy_n, sy_c, sy_h, sy_w, si_n, si_c, si_h, si_w, KW_MAX, window,
                     IS_MAX: tl.constexpr, ACC_T: tl.constexpr, CL: tl.constexpr, INT64: tl.constexpr,
                     BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr, CHUNK: tl.constexpr):
    """y (N, C, OH, OW) pooled adaptively from x (N, C, H, W) (and max's indices). NCHW: rows are BLOCK_R outputs,
    columns window elements; CL: rows are window elements of output pixel program_id(0) // tiles_c, columns
    BLOCK_C channels. window: KH_MAX * KW_MAX, the window elements walked (KW_MAX per window row), CHUNK at a
    time."""
    pid = tl.program_id(0)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        pid = pid.to(tl.int64)
    if CL:
        p = pid // tiles_c
        c = (pid % tiles_c) * BLOCK_C + tl.arange(0, BLOCK_C)
        out_ok = c < C
        ow = p % OW
        oh = p // OW % OH
        n = p // OW // OH
        h0, h1 = _window(oh, OH, H)
        w0, w1 = _window(ow, OW, W)
        x_base = x_ptr + n * sx_n + c[None, :] * sx_c
        ok_out, hb, he, wb, we = out_ok[None, :], h0, h1, w0, w1
        k_axis = tl.arange(0, BLOCK_R)[:, None]
        best = tl.full([BLOCK_C], float("-inf"), ACC_T)
        pos = tl.full([BLOCK_C], -1, tl.int64)
        total = tl.zeros([BLOCK_C], ACC_T)
    else:
        p = pid * BLOCK_R + tl.arange(0, BLOCK_R)
        out_ok = p < n_rows
        ow = p % OW
        t = p // OW
        oh = t % OH
        t = t // OH
        c = t % C
        n = t // C
        h0, h1 = _window(oh, OH, H)
        w0, w1 = _window(ow, OW, W)
        x_base = (x_ptr + n * sx_n + c * sx_c)[:, None]
        ok_out, hb, he, wb, we = out_ok[:, None], h0[:, None], h1[:, None], w0[:, None], w1[:, None]
        k_axis = tl.arange(0, BLOCK_C)[None, :]
        best = tl.full([BLOCK_R], float("-inf"), ACC_T)
        pos = tl.full([BLOCK_R], -1, tl.int64)
        total = tl.zeros([BLOCK_R], ACC_T)
    for k0 in range(0, window, CHUNK):
        k = k0 + k_axis
        dh = k // KW_MAX
        dw = k % KW_MAX
        ok = ok_out & (dh < he - hb) & (dw < we - wb)
        v = tl.load(x_base + (hb + dh) * sx_h + (wb + dw) * sx_w, mask=ok, other=0).to(ACC_T)
        flat = ((hb + dh) * W + wb + dw).to(tl.int64)
        if IS_MAX:
            if CL:
                best, pos = _fold_max(best, pos, v, flat, ok, 0)
            else:
                best, pos = _fold_max(best, pos, v, flat, ok, 1)
        else:
            if CL:
                total += reduce_sum(v, 0)
            else:
                total += reduce_sum(v, 1)
    where_y = n * sy_n + c * sy_c + oh * sy_h + ow * sy_w
    if IS_MAX:
        tl.store(idx_ptr + n * si_n + c * si_c + oh * si_h + ow * si_w, pos, mask=out_ok)
        tl.store(y_ptr + where_y, best.to(y_ptr.dtype.element_ty), mask=out_ok)
    else:
        mean = div_rn(div_rn(total, (h1 - h0).to(ACC_T)), (w1 - w0).to(ACC_T))
        tl.store(y_ptr + where_y, mean.to(y_ptr.dtype.element_ty), mask=out_ok)


@triton.jit
def _adaptive_backward_kernel(go_ptr, idx_ptr, gi_ptr, C, H, W, OH, OW, n_rows, n_cols, tiles_c, s_go_n, s_go_c,
                              s_go_h, s_go_w, s_i_n, s_i_c, s_i_h, s_i_w, s_gi_n, s_gi_c, s_gi_h, s_gi_w,
                              COVER_H: tl.constexpr, COVER_W: tl.constexpr, IS_MAX: tl.constexpr,
                              UNROLL: tl.constexpr, ACC_T: tl.constexpr, CL: tl.constexpr, INT64: tl.constexpr,
                              BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    """grad_input (N, C, H, W) from grad_output (N, C, OH, OW): each element's covering outputs, at most
    COVER_H x COVER_W of them."""
    n, c, _, h, w, mask = image_tile(C, 1, H, W, n_rows, n_cols, tiles_c, CL, INT64, BLOCK_R, BLOCK_C)
    first_h, end_h = _window(h, H, OH)
    first_w, end_w = _window(w, W, OW)
    go_base = go_ptr + n * s_go_n + c * s_go_c
    i_base = idx_ptr + n * s_i_n + c * s_i_c
    acc = tl.zeros([BLOCK_R, BLOCK_C], ACC_T)
    if UNROLL:
        for dh in tl.static_range(COVER_H):
            for dw in tl.static_range(COVER_W):
                acc = _unpool_tap(go_base, i_base, first_h + dh, first_w + dw, end_h, end_w, h, w, H, W, OH, OW,
                                  s_go_h, s_go_w, s_i_h, s_i_w, mask, acc, IS_MAX)
    else:
        for dh in range(COVER_H):
            for dw in range(COVER_W):
                acc = _unpool_tap(go_base, i_base, first_h + dh, first_w + dw, end_h, end_w, h, w, H, W, OH, OW,
                                  s_go_h, s_go_w, s_i_h, s_i_w, mask, acc, IS_MAX)
    tl.store(gi_ptr + n * s_gi_n + c * s_gi_c + h * s_gi_h + w * s_gi_w, acc.to(gi_ptr.dtype.element_ty),
             mask=mask)


@triton.jit
def _unpool_tap(go_base, i_base, oh, ow, end_h, end_w, h, w, H, W, OH, OW, s_go_h, s_go_w, s_i_h, s_i_w, mask, acc,
                IS_MAX: tl.constexpr):
    """Add output (oh, ow)'s share of its gradient to the covered elements (h, w)."""
    ok = mask & (oh < end_h) & (ow < end_w)
    if IS_MAX:
        ok = ok & (tl.load(i_base + oh * s_i_h + ow * s_i_w, mask=ok, other=-1) == h * W + w)
        acc += tl.load(go_base + oh * s_go_h + ow * s_go_w, mask=ok, other=0).to(acc.dtype)
    else:
        g = tl.load(go_base + oh * s_go_h + ow * s_go_w, mask=ok, other=0).to(acc.dtype)
        h0, h1 = _window(oh, OH, H)
        w0, w1 = _window(ow, OW, W)
        acc += tl.where(ok, div_rn(div_rn(g, (h1 - h0).to(acc.dtype)), (w1 - w0).to(acc.dtype)), 0.0)
    return acc


_adaptive = Launcher(_adaptive_kernel)
_adaptive_backward = Launcher(_adaptive_backward_kernel)


def _longest(n_in: int, n_out: int) -> int:
    """The longest window of an n_in -> n_out adaptive pooling axis (and, swapped, the most outputs covering an
    input): window o spans ceil(r + frac(o * r)) inputs, r = n_in / n_out, and frac(o * r) reaches
    1 - gcd / n_out at most."""
    return (n_in + n_out - math.gcd(n_in, n_out) + n_out - 1) // n_out if n_out else 0


def adaptive_pool(x: torch.Tensor, y: torch.Tensor, indices, is_max: bool) -> None:
    """Fill y (and for max, indices) from x."""
    if y.numel() == 0:
        return
    (_, c, _, h, w), sx = five_d(x, 2)
    sizes, sy = five_d(y, 2)
    si = five_d(indices, 2)[1] if is_max else sy
    oh, ow = sizes[3:]
    kw_max = min(_longest(w, ow), w)
    window = min(_longest(h, oh), h) * kw_max
    cl = channels_last(y)
    rows = y.numel() // c if cl else y.numel()  # output pixels (CL) or outputs
    block, num_warps = pointwise_config(y.numel() * window, x.element_size())
    if cl:  # one program per (output pixel, channel block)
        block_c = min(next_power_of_2(c), CHANNELS_LAST_BLOCK_C)
        block_r = min(next_power_of_2(window), max(1, block // block_c))
        tiles_c = cdiv(c, block_c)
        grid = rows * tiles_c
    else:
        block_c = min(next_power_of_2(window), block)
        block_r = min(max(1, block // block_c), next_power_of_2(rows), NCHW_BLOCK_R_MAX)
        tiles_c = 1
        grid = cdiv(rows, block_r)
    _adaptive((grid,), x, y, indices if is_max else y, c, h, w, oh, ow, rows, tiles_c, sx[0], sx[1], sx[3], sx[4],
              sy[0], sy[1], sy[3], sy[4], si[0], si[1], si[3], si[4], kw_max, window, is_max, ACC[x.dtype], cl,
              needs_int64(x, y), block_r, block_c, block_r if cl else block_c, num_warps=num_warps)


def adaptive_unpool(grad_output: torch.Tensor, indices, grad_input: torch.Tensor, is_max: bool) -> None:
    """Fill grad_input from grad_output (and for max, the indices)."""
    if grad_input.numel() == 0:
        return
    sizes, s_gi = five_d(grad_input, 2)
    (_, _, _, oh, ow), s_go = five_d(grad_output, 2)
    s_i = five_d(indices, 2)[1] if is_max else s_go
    h, w = sizes[3:]
    cover = (_longest(oh, h), _longest(ow, w))
    cl, rows, cols = tile_walk(grad_input, sizes)
    block_r, block_c, tiles_c, num_warps = tile_config(rows, cols, grad_input.element_size(), cl)
    _adaptive_backward((tiles_c * cdiv(rows, block_r),), grad_output, indices if is_max else grad_output,
                       grad_input, sizes[1], h, w, oh, ow, rows, cols, tiles_c, s_go[0], s_go[1], s_go[3], s_go[4],
                       s_i[0], s_i[1], s_i[3], s_i[4], s_gi[0], s_gi[1], s_gi[3], s_gi[4], *cover, is_max,
                       cover[0] * cover[1] <= UNROLLED_TAPS, ACC[grad_input.dtype], cl,
                       needs_int64(grad_output, grad_input), block_r, block_c, num_warps=num_warps)
