"""Spatially tiled depthwise kernels for operands that are not channels-last (depthwise.py's DESIGN "tiled"):

    forward      a (channels x output rows x output columns) tile of one image and one output depth per
                 program: rows and columns are tensor axes, so an element's address is a per-channel, a
                 per-row and a per-column term (no division per element) and the R*S taps of neighbouring
                 pixels read the same cache lines. grad input at stride 1 with one output channel per input
                 channel is this forward on dy with the taps flipped (FLIP) and padding dil*(k-1) - pad.
    grad weight  all taps in one program: a (taps x channels x columns) accumulator, each output row of dy read
                 once and multiplied by the taps' shifted rows of x (L1 hits); the split's rows are summed in a
                 fixed order, the splits by sum_splits (deterministic).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from gems.ops.conv.implicit_gemm import TL_ACC, needs_int64, sum_splits
from gems.ops.reduction.planning import reduce_sum
from gems.runtime.launch import Launcher, cdiv

# Forward tile: elements (channels x rows x columns), 8 per thread at 4 warps; columns cover the output row
# up to 128 (fp16: 256 bytes), rows at most MAX_BLOCK_H (56 = 7 x 8 rows: no padding), channels the rest.
TILE, MAX_BLOCK_W, MAX_BLOCK_H = 1024, 128, 8
# grad weight accumulator: (taps padded to a power of two) x channels x columns elements, 32 fp32 per thread.
GRAD_WEIGHT_TILE = 4096

# --------------------------------------------------------------------------- kernels


@triton.jit
def _tiled_forward_kernel(
    x_ptr, w_ptr, bias_ptr, y_ptr,
    KT, MULT, D, H, W, OD, OH, OW, c_blocks, h_tiles, w_tiles,
    stride_d, stride_h, stride_w, pad_d, pad_h, pad_w, dil_d, dil_h, dil_w,
    sx_n, sx_c, sx_d, sx_h, sx_w, sw_k, sw_t, sw_r, sw_s, sy_n, sy_c, sy_d, sy_h, sy_w, s_bias,
    T: tl.constexpr, R: tl.constexpr, S: tl.constexpr, HAS_BIAS: tl.constexpr, FLIP: tl.constexpr,
    ACC: tl.constexpr, INT64: tl.constexpr, BLOCK_C: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_W: tl.constexpr,
):
    """y[n, c block, od, h tile, w tile] (program_id(0) in that order, w tile fastest); FLIP reads the taps
    of w reversed."""
    pid = tl.program_id(0)
    tw = pid % w_tiles
    q = pid // w_tiles
    th = q % h_tiles
    q = q // h_tiles
    od = q % OD
    q = q // OD
    cb = q % c_blocks
    n = q // c_blocks
    ch = cb * BLOCK_C + tl.arange(0, BLOCK_C)[:, None, None]
    oh = th * BLOCK_H + tl.arange(0, BLOCK_H)[None, :, None]
    ow = tw * BLOCK_W + tl.arange(0, BLOCK_W)[None, None, :]
    if INT64:
        n, od, ch, oh, ow = n.to(tl.int64), od.to(tl.int64), ch.to(tl.int64), oh.to(tl.int64), ow.to(tl.int64)
    c_ok = ch < KT
    out_ok = c_ok & (oh < OH) & (ow < OW)
    x_cols = x_ptr + n * sx_n + (ch // MULT) * sx_c
    w_cols = w_ptr + ch * sw_k
    acc = tl.zeros([BLOCK_C, BLOCK_H, BLOCK_W], ACC)
    for t in tl.static_range(T):
        di = od * stride_d - pad_d + t * dil_d
        for r in tl.static_range(R):
            hi = oh * stride_h - pad_h + r * dil_h
            row_ok = out_ok & (di >= 0) & (di < D) & (hi >= 0) & (hi < H)
            rows = x_cols + di * sx_d + hi * sx_h
            for s in tl.static_range(S):
                wi = ow * stride_w - pad_w + s * dil_w
                xv = tl.load(rows + wi * sx_w, mask=row_ok & (wi >= 0) & (wi < W), other=0)
                if FLIP:
                    tap = (T - 1 - t) * sw_t + (R - 1 - r) * sw_r + (S - 1 - s) * sw_s
                else:
                    tap = t * sw_t + r * sw_r + s * sw_s
                wv = tl.load(w_cols + tap, mask=c_ok, other=0)
                acc += xv.to(ACC) * wv.to(ACC)
    if HAS_BIAS:
        acc += tl.load(bias_ptr + ch * s_bias, mask=c_ok, other=0).to(ACC)
    y_ptrs = y_ptr + n * sy_n + ch * sy_c + od * sy_d + oh * sy_h + ow * sy_w
    tl.store(y_ptrs, acc.to(y_ptr.dtype.element_ty), mask=out_ok)


@triton.jit
def _tiled_grad_weight_kernel(
    dy_ptr, x_ptr, part_ptr,
    ROWS, KT, MULT, D, H, W, OD, OH, OW,
    stride_d, stride_h, stride_w, pad_d, pad_h, pad_w, dil_d, dil_h, dil_w,
    sy_n, sy_c, sy_d, sy_h, sy_w, sx_n, sx_c, sx_d, sx_h, sx_w, CHUNK,
    T: tl.constexpr, R: tl.constexpr, S: tl.constexpr, TAPS: tl.constexpr, ACC: tl.constexpr,
    INT64: tl.constexpr, BLOCK_C: tl.constexpr, BLOCK_W: tl.constexpr,
):
    """part[split, oc, tap] = the sum over output rows (n, od, oh) of split program_id(1) (ROWS in all) of
    dy * x, for every tap and the channels of block program_id(0)."""
    split = tl.program_id(1)
    tap = tl.arange(0, TAPS)[:, None, None]
    s_t = tap % S
    r_t = tap // S % R
    t_t = tap // (S * R)
    tap_ok = tap < T * R * S
    ch = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)[None, :, None]
    lane = tl.arange(0, BLOCK_W)[None, None, :]
    if INT64:
        split, ch, lane = split.to(tl.int64), ch.to(tl.int64), lane.to(tl.int64)
    c_ok = ch < KT
    dy_cols = dy_ptr + ch * sy_c
    x_cols = x_ptr + (ch // MULT) * sx_c
    acc = tl.zeros([TAPS, BLOCK_C, BLOCK_W], ACC)
    start = split * CHUNK
    stop = tl.minimum(ROWS, start + CHUNK)
    for row in range(start, stop):
        oh = row % OH
        q = row // OH
        od = q % OD
        n = q // OD
        di = od * stride_d - pad_d + t_t * dil_d
        hi = oh * stride_h - pad_h + r_t * dil_h
        taps_ok = tap_ok & (di >= 0) & (di < D) & (hi >= 0) & (hi < H)
        dy_row = dy_cols + n * sy_n + od * sy_d + oh * sy_h
        x_rows = x_cols + n * sx_n + di * sx_d + hi * sx_h
        for w0 in range(0, OW, BLOCK_W):
            ow = w0 + lane
            ok = c_ok & (ow < OW)
            g = tl.load(dy_row + ow * sy_w, mask=ok, other=0)
            wi = ow * stride_w - pad_w + s_t * dil_w
            xv = tl.load(x_rows + wi * sx_w, mask=ok & taps_ok & (wi >= 0) & (wi < W), other=0)
            acc += g.to(ACC) * xv.to(ACC)
    total = reduce_sum(acc, 2)
    tap2 = tl.arange(0, TAPS)[:, None]
    oc2 = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)[None, :]
    if INT64:
        oc2 = oc2.to(tl.int64)
    part = part_ptr + split * (KT * T * R * S) + oc2 * (T * R * S) + tap2
    tl.store(part, total.to(part_ptr.dtype.element_ty), mask=(tap2 < T * R * S) & (oc2 < KT))


_forward = Launcher(_tiled_forward_kernel)
_grad_weight = Launcher(_tiled_grad_weight_kernel)


# --------------------------------------------------------------------------- launchers


def _forward_tiles(out: tuple[int, int, int], channels: int) -> tuple[int, int, int]:
    """(BLOCK_C, BLOCK_H, BLOCK_W) of the forward tile for output sizes out (OD, OH, OW)."""
    block_w = min(MAX_BLOCK_W, triton.next_power_of_2(out[2]))
    block_h = max(1, min(MAX_BLOCK_H, TILE // block_w, triton.next_power_of_2(out[1])))
    return max(1, min(TILE // (block_w * block_h), triton.next_power_of_2(channels))), block_h, block_w


def _tiled(x5, w5, bias, y5, mult, stride, padding, dilation, taps, flip) -> None:
    """y5 (N, KT, OD, OH, OW) = the depthwise convolution of x5 by w5 (flip: the taps reversed)."""
    kt, out = y5.shape[1], tuple(y5.shape[2:])
    block_c, block_h, block_w = _forward_tiles(out, kt)
    c_blocks, h_tiles, w_tiles = cdiv(kt, block_c), cdiv(out[1], block_h), cdiv(out[2], block_w)
    grid = (y5.shape[0] * c_blocks * out[0] * h_tiles * w_tiles,)
    _forward(grid, x5, w5, bias if bias is not None else y5, y5, kt, mult, *x5.shape[2:], *out, c_blocks,
             h_tiles, w_tiles, *stride, *padding, *dilation, *x5.stride(), w5.stride(0), *w5.stride()[2:],
             *y5.stride(), bias.stride(0) if bias is not None else 0, *taps, bias is not None, flip,
             TL_ACC[x5.dtype], needs_int64(x5, w5, y5), block_c, block_h, block_w)


def tiled_forward(geo, bias, y5: torch.Tensor) -> None:
    _tiled(geo.x5, geo.w5, bias, y5, geo.k, geo.stride, geo.padding, geo.dilation, geo.taps, False)


def tiled_grad_input_applies(geo) -> bool:
    """grad input is a flipped forward when every stride is 1 and each input channel has one output."""
    return geo.k == 1 and all(s == 1 for s in geo.stride)


def tiled_grad_input(geo, dy5: torch.Tensor, dx5: torch.Tensor) -> None:
    """dx[i] = sum over taps of dy[i + pad - tap*dil] * w[tap]: a forward of dy with the taps reversed and
    padding dil*(k-1) - pad (negative where pad is wider: the kernel's bounds checks still hold)."""
    padding = [d * (k - 1) - p for d, k, p in zip(geo.dilation, geo.taps, geo.padding)]
    _tiled(dy5, geo.w5, None, dx5, 1, geo.stride, padding, geo.dilation, geo.taps, True)


def tiled_grad_weight(geo, dy5: torch.Tensor, dw: torch.Tensor, sm_count: int, programs_per_sm: int,
                      min_pixels: int) -> None:
    """dw (contiguous, (M*C, 1, *taps)), the output rows split over programs as the SMs ask, each split at
    least min_pixels output pixels."""
    x5 = geo.x5
    kt, ntaps = dw.shape[0], geo.taps[0] * geo.taps[1] * geo.taps[2]
    out = geo.out
    rows = x5.shape[0] * out[0] * out[1]
    taps_p2 = triton.next_power_of_2(ntaps)
    block_w = min(MAX_BLOCK_W, triton.next_power_of_2(out[2]), max(1, GRAD_WEIGHT_TILE // taps_p2))
    block_c = max(1, min(GRAD_WEIGHT_TILE // (taps_p2 * block_w), triton.next_power_of_2(kt)))
    c_blocks = cdiv(kt, block_c)
    split = max(1, min(cdiv(programs_per_sm * sm_count, c_blocks), rows // max(1, cdiv(min_pixels, out[2])),
                       65535))
    chunk = max(1, cdiv(rows, split))
    split = max(1, cdiv(rows, chunk))  # no empty split (one when there are no rows: dw = 0)
    acc_dtype = torch.float64 if dw.dtype == torch.float64 else torch.float32
    part = dw if split == 1 else torch.empty((split, *dw.shape), dtype=acc_dtype, device=dw.device)
    _grad_weight((c_blocks, split), dy5, x5, part, rows, kt, geo.k, *x5.shape[2:], *out, *geo.stride,
                 *geo.padding, *geo.dilation, *dy5.stride(), *x5.stride(), chunk, *geo.taps, taps_p2,
                 TL_ACC[dy5.dtype], needs_int64(dy5, x5, part), block_c, block_w)
    if split > 1:
        sum_splits(part, dw, split)
