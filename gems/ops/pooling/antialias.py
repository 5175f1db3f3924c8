"""The anti-aliased resampling kernels of _upsample_bilinear2d_aa and _upsample_bicubic2d_aa (PIL's filters, as
ATen's CUDA kernels compute them), forward and backward.

Along each axis output o reads the inputs of a window around center = scale * (o + 0.5), its half-width the
support (the filter's size / 2, times the scale when downsampling):

    lo = max(int(center - support + 0.5), 0), hi = min(int(center + support + 0.5), in)
    weight of input lo + j = filter((j + lo - center + 0.5) * invscale) / (the sum over the window)

with invscale = 1 / scale when downsampling, else 1; the filter is the triangle (bilinear) or Keys' cubic with
A = -0.5 (bicubic). The result sums the window's rows weighted by the height weights, each row the sum of its
inputs weighted by the width weights, in fp32 (fp64 for float64; ATen's CUDA kernel keeps the weights and the
row sums in the input dtype).

The backward is output-indexed (deterministic; ATen's CUDA kernel adds with atomics): along each axis the
outputs whose window holds input i form a range, found by inverting the window bounds and correcting the
guess against them; each one's weight is recomputed, window sum included, as the forward computes it. Same
sizes copy, as ATen's CUDA backward does (its forward computes them).
"""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from gems.ops.pointwise.shared import div_rn
from gems.ops.pooling.resample import LINEAR, NEAREST, _scalar, axis_scale, float_bits, in_precision, resample_backward
from gems.ops.pooling.shared import ACC, five_d, image_tile, needs_int64, negative_zeros, tile_config, tile_walk
from gems.ops.reduction.planning import reduce_max
from gems.runtime.launch import Launcher, next_power_of_2

FILTER_SIZE = {False: 2, True: 4}  # the triangle's and the cubic's width, by CUBIC


@triton.jit
def _filter(x, CUBIC: tl.constexpr):
    """PIL's triangle (bilinear) or Keys' cubic with A = -0.5 (bicubic) at x."""
    x = tl.abs(x)
    if CUBIC:
        inner = (1.5 * x - 2.5) * x * x + 1.0
        outer = (((x - 5.0) * x + 8.0) * x - 4.0) * -0.5
        value = tl.where(x < 1.0, inner, tl.where(x < 2.0, outer, 0.0))
    else:
        value = tl.where(x < 1.0, 1.0 - x, 0.0)
    return value


@triton.jit
def _window(o, n_in, scale, support):
    """(lo, hi, lo - center) of output coordinates o's window."""
    center = scale * (o.to(scale.dtype) + 0.5)
    lo = tl.maximum((center - support + 0.5).to(o.dtype), 0)
    hi = tl.minimum((center + support + 0.5).to(o.dtype), n_in)
    return lo, hi, lo.to(scale.dtype) - center


@triton.jit
def _total(lo, hi, lo_minus_center, invscale, taps, CUBIC: tl.constexpr):
    """The sum of the window's filter values (the weights' divisor)."""
    total = tl.zeros(lo_minus_center.shape, lo_minus_center.dtype)
    for j in range(0, taps):
        total += tl.where(j < hi - lo, _filter((j + lo_minus_center + 0.5) * invscale, CUBIC), 0.0)
    return total


@triton.jit
def _weight(j, lo_minus_center, total, invscale, CUBIC: tl.constexpr):
    w = _filter((j + lo_minus_center + 0.5) * invscale, CUBIC)
    return tl.where(total != 0.0, div_rn(w, tl.where(total != 0.0, total, 1.0)), w)


@triton.jit
def _tap(row, x_row, jw, lo_w, hi_w, IW, sx_w, ok_row, lmc_w, total_w, inv_w, minus_zero, ACC_T: tl.constexpr,
         CUBIC: tl.constexpr):
    """row plus tap jw's weighted input along the width."""
    ok = ok_row & (jw < hi_w - lo_w)
    v = tl.load(x_row + tl.minimum(lo_w + jw, IW - 1) * sx_w, mask=ok, other=0).to(ACC_T)
    return row + tl.where(ok, _weight(jw, lmc_w, total_w, inv_w, CUBIC) * v, minus_zero)


@triton.jit
def _aa_kernel(x_ptr, y_ptr, C, IH, IW, OH, OW, n_rows, n_cols, tiles_c, sx_n, sx_c, sx_h, sx_w,
               sy_n, sy_c, sy_h, sy_w, scale_h, scale_w, support_h, support_w, inv_h, inv_w, taps_h, taps_w,
               CUBIC: tl.constexpr, ACC_T: tl.constexpr, CL: tl.constexpr, INT64: tl.constexpr,
               BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr, TAPS_W: tl.constexpr, UNROLL_H: tl.constexpr):
    """y (N, C, OH, OW) = x (N, C, IH, IW) resampled through the windows' normalized filter weights, UNROLL_H
    rows of taps a step (see SMALL_GRID)."""
    n, c, _, oh, ow, mask = image_tile(C, 1, OH, OW, n_rows, n_cols, tiles_c, CL, INT64, BLOCK_R, BLOCK_C)
    scale_h, scale_w = _scalar(scale_h, ACC_T), _scalar(scale_w, ACC_T)
    support_h, support_w = _scalar(support_h, ACC_T), _scalar(support_w, ACC_T)
    inv_h, inv_w = _scalar(inv_h, ACC_T), _scalar(inv_w, ACC_T)
    lo_h, hi_h, lmc_h = _window(oh, IH, scale_h, support_h)
    lo_w, hi_w, lmc_w = _window(ow, IW, scale_w, support_w)
    total_h = _total(lo_h, hi_h, lmc_h, inv_h, taps_h, CUBIC)
    total_w = _total(lo_w, hi_w, lmc_w, inv_w, taps_w, CUBIC)
    x_base = x_ptr + n * sx_n + c * sx_c
    minus_zero = negative_zeros(BLOCK_R, BLOCK_C, ACC_T)
    acc = minus_zero
    for jh0 in range(0, taps_h, UNROLL_H):
        for uh in tl.static_range(UNROLL_H):
            jh = jh0 + uh
            in_h = jh < hi_h - lo_h  # past taps_h too: hi - lo <= taps
            ih = tl.minimum(lo_h + jh, IH - 1)
            row = minus_zero
            x_row, ok_row = x_base + ih * sx_h, mask & in_h
            if TAPS_W > 0:  # unrolled: a row's loads are issued together, not one memory latency per tap
                for jw in tl.static_range(TAPS_W):
                    row = _tap(row, x_row, jw, lo_w, hi_w, IW, sx_w, ok_row, lmc_w, total_w, inv_w, minus_zero,
                               ACC_T, CUBIC)
            else:
                for jw in range(0, taps_w):
                    row = _tap(row, x_row, jw, lo_w, hi_w, IW, sx_w, ok_row, lmc_w, total_w, inv_w, minus_zero,
                               ACC_T, CUBIC)
            acc += tl.where(in_h, _weight(jh, lmc_h, total_h, inv_h, CUBIC) * row, minus_zero)
    tl.store(y_ptr + n * sy_n + c * sy_c + oh * sy_h + ow * sy_w, acc.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _first_past(i, n_in, n_out, scale, support, inverse, HI: tl.constexpr):
    """The first output whose window's hi (HI) or lo (not HI) bound passes input coordinates i: the inverted
    bound, corrected by one step either way against _window."""
    if HI:
        shift = -support.to(tl.float32)
    else:
        shift = support.to(tl.float32)
    guess = ((i.to(tl.float32) + 0.5 + shift) * inverse) - 0.5
    g = tl.minimum(tl.maximum(tl.ceil(guess), 0.0), n_out * 1.0).to(i.dtype)
    lo_b, hi_b, _ = _window(tl.maximum(g - 1, 0), n_in, scale, support)
    lo_g, hi_g, _ = _window(g, n_in, scale, support)
    if HI:
        before, at = hi_b > i, hi_g > i
    else:
        before, at = lo_b > i, lo_g > i
    return tl.where((g > 0) & before, g - 1, tl.where((g < n_out) & (at == 0), g + 1, g))


@triton.jit
def _aa_weight_of(o, i, n_in, scale, support, invscale, taps, CUBIC: tl.constexpr):
    """The weight with which output coordinates o read input coordinates i (0 outside o's window)."""
    lo, hi, lmc = _window(o, n_in, scale, support)
    w = _weight(i - lo, lmc, _total(lo, hi, lmc, invscale, taps, CUBIC), invscale, CUBIC)
    return tl.where((i >= lo) & (i < hi), w, 0.0)


@triton.jit
def _aa_backward_kernel(go_ptr, gi_ptr, C, IH, IW, OH, OW, n_rows, n_cols, tiles_c, s_go_n, s_go_c, s_go_h,
                        s_go_w, s_gi_n, s_gi_c, s_gi_h, s_gi_w, scale_h, scale_w, support_h, support_w, inv_h,
                        inv_w, taps_h, taps_w, inverse_h, inverse_w, CUBIC: tl.constexpr, ACC_T: tl.constexpr,
                        CL: tl.constexpr, INT64: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    """grad_input (N, C, IH, IW): per element, the sum over the outputs whose windows hold it of their weight
    product times their gradient."""
    n, c, _, h, w, mask = image_tile(C, 1, IH, IW, n_rows, n_cols, tiles_c, CL, INT64, BLOCK_R, BLOCK_C)
    scale_h, scale_w = _scalar(scale_h, ACC_T), _scalar(scale_w, ACC_T)
    support_h, support_w = _scalar(support_h, ACC_T), _scalar(support_w, ACC_T)
    inv_h, inv_w = _scalar(inv_h, ACC_T), _scalar(inv_w, ACC_T)
    guess_h, guess_w = _scalar(inverse_h, tl.float32), _scalar(inverse_w, tl.float32)
    lo_h = _first_past(h, IH, OH, scale_h, support_h, guess_h, True)
    count_h = _first_past(h, IH, OH, scale_h, support_h, guess_h, False) - lo_h
    lo_w = _first_past(w, IW, OW, scale_w, support_w, guess_w, True)
    count_w = _first_past(w, IW, OW, scale_w, support_w, guess_w, False) - lo_w
    go_base = go_ptr + n * s_go_n + c * s_go_c
    acc = tl.zeros([BLOCK_R, BLOCK_C], ACC_T)
    for kh in range(0, reduce_max(reduce_max(tl.where(mask, count_h, 0), 1), 0)):
        oh = lo_h + kh
        w_h = _aa_weight_of(oh, h, IH, scale_h, support_h, inv_h, taps_h, CUBIC)
        ok_h = mask & (kh < count_h)
        for kw in range(0, reduce_max(reduce_max(tl.where(mask, count_w, 0), 1), 0)):
            ow = lo_w + kw
            ok = ok_h & (kw < count_w)
            g = tl.load(go_base + oh * s_go_h + ow * s_go_w, mask=ok, other=0).to(ACC_T)
            acc += (_aa_weight_of(ow, w, IW, scale_w, support_w, inv_w, taps_w, CUBIC) * w_h) * g
    tl.store(gi_ptr + n * s_gi_n + c * s_gi_c + h * s_gi_h + w * s_gi_w, acc.to(gi_ptr.dtype.element_ty),
             mask=mask)


# Windows of up to this many taps along the width are unrolled (one compiled kernel per power of two of taps):
# the rolled loop waited one load latency per tap, and a small image is nothing but that wait (1x4x32x32 bicubic
# halved, 9x9 taps: 21 us of kernel time on an H200 against ATen's 11). Wider windows (downscaling by more than
# 7x) keep the loop.
MAX_UNROLLED_TAPS = 16
# Where y has at most SMALL_GRID elements, unrolled rows go two a step: few programs, each waiting one load
# latency per row (the 1x4x32x32 bicubic halving, 9 rows: 14.3 us of kernel time on an H200 with rows one a step,
# against ATen's 12.0). Larger grids hide the latency with other programs and keep one row a step (registers).
SMALL_GRID = 1 << 20
_aa = Launcher(_aa_kernel)
_aa_backward = Launcher(_aa_backward_kernel)


def _axes(in_sizes, out_sizes, cubic, align, scales, dtype):
    """Per axis (h, w): (scale, support, the filter's argument scale, taps) as ATen's CUDA kernel computes
    them (in the accumulation type: in_precision)."""
    axes = []
    for n_in, n_out, given in zip(in_sizes, out_sizes, scales):
        scale = axis_scale(n_in, n_out, LINEAR, align, given, dtype)
        half = FILTER_SIZE[cubic] * 0.5
        support = half * scale if scale >= 1.0 else half
        invscale = in_precision(1.0 / scale, dtype) if scale >= 1.0 else 1.0
        axes.append((scale, support, invscale, math.ceil(support) * 2 + 1))
    return axes


def antialias(x: torch.Tensor, y: torch.Tensor, cubic: bool, align: bool, scales) -> torch.Tensor:
    """Fill y (N, C, OH, OW) from x (N, C, IH, IW); scales: the (h, w) scale factors given, or None."""
    if y.numel() == 0:
        return y
    (n, c, _, ih, iw), sx = five_d(x, 2)
    y_sizes, sy = five_d(y, 2)
    (sh, suph, ivh, th), (sw, supw, ivw, tw) = _axes((ih, iw), y_sizes[3:], cubic, align, scales, x.dtype)
    cl, rows, cols = tile_walk(y, y_sizes)
    block_r, block_c, tiles_c, num_warps = tile_config(rows, cols, y.element_size(), cl)
    _aa((tiles_c * -(-rows // block_r),), x, y, c, ih, iw, *y_sizes[3:], rows, cols, tiles_c, sx[0], sx[1],
        sx[3], sx[4], sy[0], sy[1], sy[3], sy[4], float_bits(sh), float_bits(sw), float_bits(suph),
        float_bits(supw), float_bits(ivh), float_bits(ivw), th, tw, cubic, ACC[x.dtype], cl, needs_int64(x, y),
        block_r, block_c, next_power_of_2(tw) if tw <= MAX_UNROLLED_TAPS else 0,
        2 if tw <= MAX_UNROLLED_TAPS and y.numel() <= SMALL_GRID else 1, num_warps=num_warps)
    return y


def antialias_backward(grad_output: torch.Tensor, grad_input: torch.Tensor, cubic: bool, align: bool,
                       scales) -> torch.Tensor:
    """Fill grad_input (N, C, IH, IW) with the gradient of antialias for grad_output (N, C, OH, OW)."""
    if grad_input.numel() == 0:
        return grad_input
    gi_sizes, s_gi = five_d(grad_input, 2)
    go_sizes, s_go = five_d(grad_output, 2)
    if gi_sizes[3:] == go_sizes[3:]:  # ATen's CUDA backward copies
        return resample_backward(grad_output, grad_input, 2, NEAREST, False, (None, None))
    (sh, suph, ivh, th), (sw, supw, ivw, tw) = _axes(gi_sizes[3:], go_sizes[3:], cubic, align, scales,
                                                     grad_input.dtype)
    cl, rows, cols = tile_walk(grad_input, gi_sizes)
    block_r, block_c, tiles_c, num_warps = tile_config(rows, cols, grad_input.element_size(), cl)
    _aa_backward((tiles_c * -(-rows // block_r),), grad_output, grad_input, gi_sizes[1], *gi_sizes[3:],
                 *go_sizes[3:], rows, cols, tiles_c, s_go[0], s_go[1], s_go[3], s_go[4], s_gi[0], s_gi[1], s_gi[3],
                 s_gi[4], float_bits(sh), float_bits(sw), float_bits(suph), float_bits(supw), float_bits(ivh),
                 float_bits(ivw), th, tw,
                 float_bits(1.0 / sh if sh > 0 else 2.0**40), float_bits(1.0 / sw if sw > 0 else 2.0**40), cubic,
                 ACC[grad_input.dtype], cl, needs_int64(grad_output, grad_input), block_r, block_c,
                 num_warps=num_warps)
    return grad_input
