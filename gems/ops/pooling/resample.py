"""The resampling kernels of upsample_nearest{1,2,3}d, _upsample_nearest_exact{1,2,3}d, upsample_linear1d,
upsample_bilinear2d, upsample_trilinear3d and upsample_bicubic2d, forward and backward, over 1-3 spatial
dims (an absent dim is size 1 and reads with weight 1).

Along each dim, output coordinate o reads from ``first``, the source position's integer part, and its fraction
(ATen's CUDA formulas, in its accumulation type; the scale is in/out, (in-1)/(out-1) with align_corners, or
1/scale_factor when one is given):

    nearest        first = min(floor(o * scale), in - 1)               one tap, an exact copy (fp32 index math)
    nearest-exact  first = min(floor((o + 0.5) * scale), in - 1)
    linear         src = scale * (o + 0.5) - 0.5, clamped at 0 (scale * o with align_corners)
                   taps first (weight 1 - frac) and first + 1 (frac; first again at the last input)
    cubic          src as linear, not clamped; taps first - 1 .. first + 2 clamped into the input, Keys'
                   cubic coefficients with A = -0.75

The backward is output-indexed, so deterministic (ATen's CUDA kernels add into grad_input with atomics): each
grad_input element sums the grad_output elements that read it. Along each dim those form one range of
outputs, found by inverting the source formula and correcting the guess against the forward's own index math
(floats), so the range is exact; inside it each output's weight is recomputed as the forward computes it.
The loops run to the longest range of the tile. A nearest resampling by whole power-of-two factors (x2
upsampling) copies each input to a whole block of outputs: resample_blocks.py's kernels serve it, forward and
backward.

ATen's CUDA kernels copy when input and output have the same size (linear, bilinear, trilinear, bicubic,
forward and backward): the launcher then asks for a nearest copy with scale 1.
"""

from __future__ import annotations

import math
import struct

import torch
import triton
import triton.language as tl

from gems.ops.pooling.resample_blocks import upsample_blocks, upsample_blocks_backward, whole_factors
from gems.ops.pooling.shared import ACC, five_d, image_tile, needs_int64, negative_zeros, tile_config, tile_walk
from gems.ops.reduction.planning import reduce_max
from gems.runtime.launch import Launcher

NEAREST, NEAREST_EXACT, LINEAR, CUBIC = range(4)
_NEAREST, _NEAREST_EXACT, _LINEAR, _CUBIC = (tl.constexpr(m) for m in range(4))
TAPS = {NEAREST: 1, NEAREST_EXACT: 1, LINEAR: 2, CUBIC: 4}
# The inverse scale of an axis whose scale is 0 (align_corners with one output): every output reads input 0,
# and guesses of y / scale must still be finite.
_NO_INVERSE = float(2**40)


@triton.jit
def _scalar(bits, ACC_T: tl.constexpr):
    """A float the host passes as its float64 bits (Python floats reach a kernel as fp32 otherwise)."""
    return tl.cast(tl.cast(bits, tl.int64), tl.float64, bitcast=True).to(ACC_T)


@triton.jit
def _source(o, scale, n_in, MODE: tl.constexpr, ALIGN: tl.constexpr):
    """(first input index read by output coordinates o, the fraction of the source position past it); cubic's
    ``first`` may lie outside the input (its taps are clamped), as ATen's."""
    if MODE == _NEAREST:  # fp32 whatever the dtype (ATen's nearest index math)
        src = tl.floor(o.to(tl.float32) * scale.to(tl.float32))
    elif MODE == _NEAREST_EXACT:
        src = tl.floor((o.to(tl.float32) + 0.5) * scale.to(tl.float32))
    elif ALIGN:
        src = scale * o.to(scale.dtype)
    else:
        src = scale * (o.to(scale.dtype) + 0.5) - 0.5
        if MODE == _LINEAR:
            src = tl.maximum(src, 0.0)
    whole = tl.floor(src)
    first = whole.to(o.dtype)
    if MODE != _CUBIC:  # ATen clamps nearest; linear is clamped so that no scale reads past the input
        first = tl.minimum(first, n_in - 1)
    return first, src - whole


@triton.jit
def _cubic(x, T: tl.constexpr):
    """Keys' cubic convolution coefficient of tap T (0..3) at fraction x (A = -0.75, as ATen: taps 0 and 3 at
    distances x + 1 and (1 - x) + 1, taps 1 and 2 at x and 1 - x)."""
    if T == 0:
        y = x + 1.0
    elif T == 1:
        y = x
    elif T == 2:
        y = 1.0 - x
    else:
        y = (1.0 - x) + 1.0
    if T == 0 or T == 3:
        c = ((-0.75 * y + 3.75) * y - 6.0) * y + 3.0
    else:
        c = (1.25 * y - 2.25) * y * y + 1.0
    return c


@triton.jit
def _tap(first, frac, n_in, T: tl.constexpr, MODE: tl.constexpr, N_TAPS: tl.constexpr):
    """(input index, weight) of tap T of an axis with N_TAPS taps (1: an absent or nearest axis, whose cubic
    ``first`` may be -1). One return after static branches (see pointwise/shared.py div_rn)."""
    if N_TAPS == 1:
        index, weight = tl.maximum(first, 0), 1.0
    elif MODE == _LINEAR:
        if T == 0:
            index, weight = first, 1.0 - frac
        else:
            index, weight = first + (first < n_in - 1).to(first.dtype), frac
    else:
        index, weight = tl.minimum(tl.maximum(first - 1 + T, 0), n_in - 1), _cubic(frac, T)
    return index, weight


@triton.jit
def _first_reaching(y, n_in, n_out, scale, inverse, MODE: tl.constexpr, ALIGN: tl.constexpr):
    """The first output whose ``first`` is >= y (n_out if none): the inverted formula, corrected by one step
    either way against _source."""
    yf = y.to(tl.float32)
    if MODE == _NEAREST:
        guess = yf * inverse
    elif MODE == _NEAREST_EXACT:
        guess = yf * inverse - 0.5
    elif ALIGN:
        guess = yf * inverse
    else:
        guess = (yf + 0.5) * inverse - 0.5
    g = tl.minimum(tl.maximum(tl.ceil(guess), 0.0), n_out * 1.0).to(y.dtype)
    before, _ = _source(tl.maximum(g - 1, 0), scale, n_in, MODE, ALIGN)
    at, _ = _source(g, scale, n_in, MODE, ALIGN)
    g = tl.where((g > 0) & (before >= y), g - 1, tl.where((g < n_out) & (at < y), g + 1, g))
    if MODE != _CUBIC:  # ``first`` is clamped to the last input
        g = tl.where(y > n_in - 1, n_out, g)
    return g


@triton.jit
def _readers(i, n_in, n_out, scale, inverse, MODE: tl.constexpr, ALIGN: tl.constexpr):
    """(first output, count) of the outputs whose taps read input coordinates i: those whose ``first`` lies in
    [i - 1, i] (linear), [i - 2, i + 1] (cubic, whose clamped taps also reach i = 0 and the last input)."""
    if MODE == _LINEAR:
        lo, hi = i - 1, i + 1
    elif MODE == _CUBIC:
        lo, hi = i - 2, tl.where(i == n_in - 1, n_in, i + 2)
    else:
        lo, hi = i, i + 1
    start = _first_reaching(lo, n_in, n_out, scale, inverse, MODE, ALIGN)
    return start, _first_reaching(hi, n_in, n_out, scale, inverse, MODE, ALIGN) - start


@triton.jit
def _weight_of(o, i, scale, n_in, MODE: tl.constexpr, ALIGN: tl.constexpr, N_TAPS: tl.constexpr):
    """The weight with which output coordinates o read input coordinates i (the sum over taps reading i)."""
    first, frac = _source(o, scale, n_in, MODE, ALIGN)
    weight = tl.zeros(first.shape, scale.dtype)
    for t in tl.static_range(N_TAPS):
        index, w = _tap(first, frac, n_in, t, MODE, N_TAPS)
        weight += tl.where(index == i, w, 0.0)
    return weight


@triton.jit
def _most(count, mask):
    """The largest count over the tile's elements (a loop bound)."""
    return reduce_max(reduce_max(tl.where(mask, count, 0), 1), 0)


@triton.jit
def _resample_kernel(x_ptr, y_ptr, C, ID, IH, IW, OD, OH, OW, n_rows, n_cols, tiles_c,
                     sx_n, sx_c, sx_d, sx_h, sx_w, sy_n, sy_c, sy_d, sy_h, sy_w, scale_d, scale_h, scale_w,
                     MODE: tl.constexpr, ALIGN: tl.constexpr, TAPS_D: tl.constexpr, TAPS_H: tl.constexpr,
                     TAPS_W: tl.constexpr, ACC_T: tl.constexpr, CL: tl.constexpr, INT64: tl.constexpr,
                     BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    """y (N, C, OD, OH, OW) = x (N, C, ID, IH, IW) resampled: per output, the weighted taps of each axis,
    summed innermost axis first (ATen's order), starting from -0.0 (the sum of the first term alone)."""
    n, c, od, oh, ow, mask = image_tile(C, OD, OH, OW, n_rows, n_cols, tiles_c, CL, INT64, BLOCK_R, BLOCK_C)
    scale_d, scale_h, scale_w = _scalar(scale_d, ACC_T), _scalar(scale_h, ACC_T), _scalar(scale_w, ACC_T)
    fd, rd = _source(od, scale_d, ID, MODE, ALIGN)
    fh, rh = _source(oh, scale_h, IH, MODE, ALIGN)
    fw, rw = _source(ow, scale_w, IW, MODE, ALIGN)
    x_base = x_ptr + n * sx_n + c * sx_c
    y_ptrs = y_ptr + n * sy_n + c * sy_c + od * sy_d + oh * sy_h + ow * sy_w
    if MODE == _NEAREST or MODE == _NEAREST_EXACT:
        tl.store(y_ptrs, tl.load(x_base + fd * sx_d + fh * sx_h + fw * sx_w, mask=mask), mask=mask)
    else:
        minus_zero = negative_zeros(BLOCK_R, BLOCK_C, ACC_T)
        acc = minus_zero
        for td in tl.static_range(TAPS_D):
            i_d, w_d = _tap(fd, rd, ID, td, MODE, TAPS_D)
            acc_h = minus_zero
            for th in tl.static_range(TAPS_H):
                i_h, w_h = _tap(fh, rh, IH, th, MODE, TAPS_H)
                acc_w = minus_zero
                for tw in tl.static_range(TAPS_W):
                    i_w, w_w = _tap(fw, rw, IW, tw, MODE, TAPS_W)
                    v = tl.load(x_base + i_d * sx_d + i_h * sx_h + i_w * sx_w, mask=mask, other=0).to(ACC_T)
                    acc_w += w_w * v
                acc_h += w_h * acc_w
            acc += w_d * acc_h
        tl.store(y_ptrs, acc.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _add_reader(acc, go_row, ow, s_go_w, ok, w_dh, w, scale_w, IW, MODE: tl.constexpr, ALIGN: tl.constexpr,
                TAPS_W: tl.constexpr, ACC_T: tl.constexpr):
    """acc plus what output ow of the row at go_row passes back to inputs w (weight w_dh along d and h)."""
    g = tl.load(go_row + ow * s_go_w, mask=ok, other=0).to(ACC_T)
    if MODE == _NEAREST or MODE == _NEAREST_EXACT:
        acc += g
    else:
        acc += (w_dh * _weight_of(ow, w, scale_w, IW, MODE, ALIGN, TAPS_W)) * g
    return acc


@triton.jit
def _resample_backward_kernel(go_ptr, gi_ptr, C, ID, IH, IW, OD, OH, OW, n_rows, n_cols, tiles_c,
                              s_go_n, s_go_c, s_go_d, s_go_h, s_go_w, s_gi_n, s_gi_c, s_gi_d, s_gi_h, s_gi_w,
                              scale_d, scale_h, scale_w, inverse_d, inverse_h, inverse_w,
                              MODE: tl.constexpr, ALIGN: tl.constexpr, TAPS_D: tl.constexpr, TAPS_H: tl.constexpr,
                              TAPS_W: tl.constexpr, ACC_T: tl.constexpr, CL: tl.constexpr, INT64: tl.constexpr,
                              BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr, UNROLL_H: tl.constexpr,
                              UNROLL_W: tl.constexpr):
    """grad_input (N, C, ID, IH, IW) = for each element, the sum over the grad_output (N, C, OD, OH, OW)
    elements that read it of their weight times their gradient (in ACC_T, from +0.0 as ATen). The readers
    along h and w are visited UNROLL_H x UNROLL_W at a time, their loads issued together (see UNROLL)."""
    n, c, d, h, w, mask = image_tile(C, ID, IH, IW, n_rows, n_cols, tiles_c, CL, INT64, BLOCK_R, BLOCK_C)
    scale_d, scale_h, scale_w = _scalar(scale_d, ACC_T), _scalar(scale_h, ACC_T), _scalar(scale_w, ACC_T)
    inv_d = _scalar(inverse_d, tl.float32)
    inv_h = _scalar(inverse_h, tl.float32)
    inv_w = _scalar(inverse_w, tl.float32)
    lo_d, count_d = _readers(d, ID, OD, scale_d, inv_d, MODE, ALIGN)
    lo_h, count_h = _readers(h, IH, OH, scale_h, inv_h, MODE, ALIGN)
    lo_w, count_w = _readers(w, IW, OW, scale_w, inv_w, MODE, ALIGN)
    go_base = go_ptr + n * s_go_n + c * s_go_c
    acc = tl.zeros([BLOCK_R, BLOCK_C], ACC_T)
    most_h = _most(count_h, mask)
    most_w = _most(count_w, mask)
    for kd in range(0, _most(count_d, mask)):
        od = lo_d + kd
        w_d = _weight_of(od, d, scale_d, ID, MODE, ALIGN, TAPS_D)
        ok_d = mask & (kd < count_d)
        if UNROLL_H * UNROLL_W == 1:  # h's weight once per h reader
            for kh in range(0, most_h):
                oh = lo_h + kh
                w_dh = w_d * _weight_of(oh, h, scale_h, IH, MODE, ALIGN, TAPS_H)
                ok_dh = ok_d & (kh < count_h)
                for kw in range(0, most_w):
                    acc = _add_reader(acc, go_base + od * s_go_d + oh * s_go_h, lo_w + kw, s_go_w,
                                      ok_dh & (kw < count_w), w_dh, w, scale_w, IW, MODE, ALIGN, TAPS_W, ACC_T)
        else:  # a chunk's loads in one step
            for kh0 in range(0, most_h, UNROLL_H):
                for kw0 in range(0, most_w, UNROLL_W):
                    for uh in tl.static_range(UNROLL_H):
                        oh = lo_h + kh0 + uh
                        w_dh = w_d * _weight_of(oh, h, scale_h, IH, MODE, ALIGN, TAPS_H)
                        ok_dh = ok_d & (kh0 + uh < count_h)
                        for uw in tl.static_range(UNROLL_W):
                            acc = _add_reader(acc, go_base + od * s_go_d + oh * s_go_h, lo_w + kw0 + uw, s_go_w,
                                              ok_dh & (kw0 + uw < count_w), w_dh, w, scale_w, IW, MODE, ALIGN, TAPS_W,
                                              ACC_T)
    gi = gi_ptr + n * s_gi_n + c * s_gi_c + d * s_gi_d + h * s_gi_h + w * s_gi_w
    tl.store(gi, acc.to(gi_ptr.dtype.element_ty), mask=mask)


_resample = Launcher(_resample_kernel)
_resample_backward = Launcher(_resample_backward_kernel)


# The backward's readers of one input along h and w are visited up to UNROLL at a time, their loads issued
# together, where grad_input has at most UNROLL_MAX_NUMEL elements: a small grid has too few warps to hide one
# memory latency per reader (trilinear x2 backward of 4 x 16^3 fp16, 64 readers in turn: 24.5 us a call on an
# H200 against ATen's 9.8). Larger grids keep one reader a step (fewer registers, the same loads in flight).
UNROLL = 4
UNROLL_MAX_NUMEL = 1 << 20


def _unroll(scale: float, taps: int) -> int:
    """Readers visited at a time along an axis: about as many as read one input (taps / scale; the loop's
    bound stays the tile's real count, so a guess short of it costs a step more), a power of two up to UNROLL."""
    readers = UNROLL if scale <= 0 else max(1, min(UNROLL, math.ceil(taps / scale)))
    return 1 << (readers - 1).bit_length()


def float_bits(value: float) -> int:
    """value's float64 bits, as a kernel takes a float it must not round to fp32 (see _scalar)."""
    return struct.unpack("<q", struct.pack("<d", value))[0]


def in_precision(value: float, dtype: torch.dtype) -> float:
    """value rounded to the accumulation type of dtype (fp32 unless float64): ATen's host-side scale math."""
    return value if dtype is torch.float64 else struct.unpack("<f", struct.pack("<f", value))[0]


def axis_scale(n_in: int, n_out: int, mode: int, align: bool, scale, dtype: torch.dtype) -> float:
    """The source positions' step along an axis, as ATen's compute_scales_value (nearest, always fp32) and
    area_pixel_compute_scale (linear, cubic: in the accumulation type) compute it."""
    given = scale is not None and scale > 0
    if mode in (NEAREST, NEAREST_EXACT):
        return in_precision(1.0 / scale if given else n_in / n_out, torch.float32)
    if align:
        return in_precision((n_in - 1) / (n_out - 1), dtype) if n_out > 1 else 0.0
    return in_precision(1.0 / scale if given else n_in / n_out, dtype)


def _plan(x_sizes, y_sizes, mode, align, scales, dtype, spatial):
    """(mode, scale per axis d, h, w, taps per axis): the same sizes copy (ATen's special case) except with
    nearest modes, which copy exactly anyway."""
    if mode in (LINEAR, CUBIC) and x_sizes[2:] == y_sizes[2:]:
        mode, scales = NEAREST, (None, None, None)
    axis_scales = [axis_scale(i, o, mode, align, s, dtype) for i, o, s in zip(x_sizes[2:], y_sizes[2:], scales)]
    taps = [TAPS[mode] if k >= 3 - spatial else 1 for k in range(3)]
    return mode, axis_scales, taps


def resample(x: torch.Tensor, y: torch.Tensor, spatial: int, mode: int, align: bool, scales) -> torch.Tensor:
    """Fill y (the result, (N, C, *out)) from x (N, C, *in); scales: per spatial axis (d, h, w order, absent
    axes None) the scale factor given, or None."""
    if y.numel() == 0:
        return y
    (n, c, *in_sizes), sx = five_d(x, spatial)
    y_sizes, sy = five_d(y, spatial)
    scales = (None,) * (3 - spatial) + tuple(scales)
    mode, axis_scales, taps = _plan([n, c, *in_sizes], y_sizes, mode, align, scales, x.dtype, spatial)
    factors = whole_factors(mode in (NEAREST, NEAREST_EXACT), in_sizes, y_sizes[2:], axis_scales)
    if factors is not None:
        return upsample_blocks(x, y, [n, c, *in_sizes], sx, sy, factors)
    cl, rows, cols = tile_walk(y, y_sizes)
    block_r, block_c, tiles_c, num_warps = tile_config(rows, cols, y.element_size(), cl)
    _resample((tiles_c * -(-rows // block_r),), x, y, c, *in_sizes, *y_sizes[2:], rows, cols, tiles_c, *sx, *sy,
              *(float_bits(s) for s in axis_scales), mode, align, *taps, ACC.get(x.dtype, tl.float32), cl,
              needs_int64(x, y), block_r, block_c, num_warps=num_warps)
    return y


def resample_backward(grad_output: torch.Tensor, grad_input: torch.Tensor, spatial: int, mode: int, align: bool,
                      scales) -> torch.Tensor:
    """Fill grad_input (N, C, *in) with the gradient of resample for grad_output (N, C, *out)."""
    if grad_input.numel() == 0:
        return grad_input
    gi_sizes, s_gi = five_d(grad_input, spatial)
    go_sizes, s_go = five_d(grad_output, spatial)
    scales = (None,) * (3 - spatial) + tuple(scales)
    mode, axis_scales, taps = _plan(gi_sizes, go_sizes, mode, align, scales, grad_input.dtype, spatial)
    cl, rows, cols = tile_walk(grad_input, gi_sizes)
    block_r, block_c, tiles_c, num_warps = tile_config(rows, cols, grad_input.element_size(), cl)
    factors = whole_factors(mode in (NEAREST, NEAREST_EXACT), gi_sizes[2:], go_sizes[2:], axis_scales)
    if factors is not None:
        return upsample_blocks_backward(grad_output, grad_input, gi_sizes, s_go, s_gi, factors)
    inverses = [1.0 / s if s > 0 else _NO_INVERSE for s in axis_scales]
    small = grad_input.numel() <= UNROLL_MAX_NUMEL
    unroll_h, unroll_w = ((_unroll(s, t) if small else 1) for s, t in zip(axis_scales[1:], taps[1:]))
    _resample_backward((tiles_c * -(-rows // block_r),), grad_output, grad_input, gi_sizes[1], *gi_sizes[2:],
                       *go_sizes[2:], rows, cols, tiles_c, *s_go, *s_gi, *(float_bits(s) for s in axis_scales),
                       *(float_bits(v) for v in inverses), mode, align, *taps, ACC[grad_input.dtype], cl,
                       needs_int64(grad_output, grad_input), block_r, block_c, unroll_h, unroll_w,
                       num_warps=num_warps)
    return grad_input
