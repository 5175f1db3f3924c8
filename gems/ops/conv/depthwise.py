"""Direct kernels of depthwise convolutions (one input channel per group, weight (M*C, 1, taps), M output
channels per input channel): what MobileNet and ConvNeXt blocks run. The implicit GEMM of
implicit_gemm.py would do one tiny GEMM per group (a dot of at most 16 wide over 9 taps); these kernels are
elementwise instead, each program a block of pixels x a block of channels with the taps unrolled:

    forward      y[n, oc, o]  = bias[oc] + sum over taps of x[n, oc // M, o*stride - pad + tap*dil] * w[oc, tap]
    grad input   dx[n, c, i]  = sum over m < M and taps with o*stride == i + pad - tap*dil of
                                dy[n, c*M + m, o] * w[c*M + m, tap]   (a direct gather)
    grad weight  dw[oc, tap]  = sum over (n, o) of dy[n, oc, o] * x[n, oc // M, o*stride - pad + tap*dil], one
                                tap per program, the pixels split over programs whose partial sums a second
                                kernel adds in a fixed order (deterministic)

Tensors are read through their strides. Channels-last operands take wide channel blocks (a pixel's channels
are consecutive addresses), NCHW ones wide pixel blocks of one image (consecutive output pixels of a row are
consecutive addresses); fp16/bf16/fp32 accumulate in fp32, fp64 in fp64. 1-d, 2-d and 3-d alike (as_3d).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from gems.ops.conv.implicit_gemm import TL_ACC, needs_int64, split_pixel, sum_splits
from gems.ops.reduction.planning import reduce_sum
from gems.runtime.launch import Launcher, cdiv

# Elements of a (pixels x channels) tile, 8 per thread at 4 warps. H100, batch 32, fp16 3x3 stride 1 NCHW
# (tools/dwconv_bench.py, ms forward / backward): 1024 beat 2048 and 4096 at every shape: 144ch 56x56 0.163 /
# 0.696 against 0.334 / 0.985 (2048) and 0.681 / 1.977 (4096); 256ch 28x28 0.058 / 0.327 against 0.095 / 0.354;
# 960ch 7x7 0.021 / 0.082 against 0.039 / 0.107; 32ch 112x112 0.057 / 0.631 against 0.066 / 0.695.
TILE = 1024
# Channel block of a channels-last operand: 64 fp16 channels are one 128-byte line per pixel.
CHANNELS_LAST_BLOCK_C = 64
# NCHW operands: pixel block of one image (784 = 28 x 28 pixels in 7 blocks of 128: 12% padding).
NCHW_BLOCK_P = 128
# grad_weight: aim for this many programs per SM, each reducing at least this many pixels.
PROGRAMS_PER_SM, MIN_PIXELS_PER_SPLIT = 4, 2048

# --------------------------------------------------------------------------- kernels


@triton.jit
def _inside(d, h, w, D, H, W):
    return (d >= 0) & (d < D) & (h >= 0) & (h < H) & (w >= 0) & (w < W)


@triton.jit
def _tile(start_p, start_c, INT64: tl.constexpr, BLOCK_P: tl.constexpr, BLOCK_C: tl.constexpr,
          CH_FAST: tl.constexpr):
    """(pixel, channel) indices of a tile as 2-d broadcastable tensors, the memory-contiguous one on the
    last axis (Triton's default thread order: consecutive threads then read consecutive addresses)."""
    offs_p = start_p + tl.arange(0, BLOCK_P)
    offs_c = start_c + tl.arange(0, BLOCK_C)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        offs_p = offs_p.to(tl.int64)
        offs_c = offs_c.to(tl.int64)
    if CH_FAST:
        pix, ch = offs_p[:, None], offs_c[None, :]
    else:
        pix, ch = offs_p[None, :], offs_c[:, None]
    return pix, ch


@triton.jit
def _dw_forward_kernel(
    x_ptr, w_ptr, bias_ptr, y_ptr,
    P, KT, MULT, D, H, W, OD, OH, OW,
    stride_d, stride_h, stride_w, pad_d, pad_h, pad_w, dil_d, dil_h, dil_w,
    sx_n, sx_c, sx_d, sx_h, sx_w, sw_k, sw_t, sw_r, sw_s, sy_n, sy_c, sy_d, sy_h, sy_w, s_bias,
    T: tl.constexpr, R: tl.constexpr, S: tl.constexpr, HAS_BIAS: tl.constexpr, ACC: tl.constexpr,
    INT64: tl.constexpr, BLOCK_P: tl.constexpr, BLOCK_C: tl.constexpr, CH_FAST: tl.constexpr,
):
    """A BLOCK_P (output pixels of image program_id(0) // tiles) x BLOCK_C (output channels) tile of y."""
    tiles = (P + BLOCK_P - 1) // BLOCK_P
    pid = tl.program_id(0)
    n = pid // tiles
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        n = n.to(tl.int64)
    pix, ch = _tile((pid % tiles) * BLOCK_P, tl.program_id(1) * BLOCK_C, INT64, BLOCK_P, BLOCK_C, CH_FAST)
    mask = (pix < P) & (ch < KT)
    _, od, oh, ow = split_pixel(pix, OD, OH, OW)
    x_cols = x_ptr + n * sx_n + (ch // MULT) * sx_c
    w_cols = w_ptr + ch * sw_k
    acc = tl.zeros_like(pix + ch).to(ACC)
    for t in tl.static_range(T):
        di = od * stride_d - pad_d + t * dil_d
        for r in tl.static_range(R):
            hi = oh * stride_h - pad_h + r * dil_h
            for s in tl.static_range(S):
                wi = ow * stride_w - pad_w + s * dil_w
                xv = tl.load(x_cols + (di * sx_d + hi * sx_h + wi * sx_w), mask=mask & _inside(di, hi, wi, D, H, W),
                             other=0)
                wv = tl.load(w_cols + (t * sw_t + r * sw_r + s * sw_s), mask=ch < KT, other=0)
                acc += xv.to(ACC) * wv.to(ACC)
    if HAS_BIAS:
        acc += tl.load(bias_ptr + ch * s_bias, mask=ch < KT, other=0).to(ACC)
    y_ptrs = y_ptr + n * sy_n + od * sy_d + oh * sy_h + ow * sy_w + ch * sy_c
    tl.store(y_ptrs, acc.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _dw_grad_input_kernel(
    dy_ptr, w_ptr, dx_ptr,
    P, C, MULT, D, H, W, OD, OH, OW,
    stride_d, stride_h, stride_w, pad_d, pad_h, pad_w, dil_d, dil_h, dil_w,
    sy_n, sy_c, sy_d, sy_h, sy_w, sw_k, sw_t, sw_r, sw_s, sx_n, sx_c, sx_d, sx_h, sx_w,
    T: tl.constexpr, R: tl.constexpr, S: tl.constexpr, ACC: tl.constexpr, INT64: tl.constexpr,
    BLOCK_P: tl.constexpr, BLOCK_C: tl.constexpr, CH_FAST: tl.constexpr,
):
    """A BLOCK_P (input pixels of image program_id(0) // tiles) x BLOCK_C (input channels) tile of dx."""
    tiles = (P + BLOCK_P - 1) // BLOCK_P
    pid = tl.program_id(0)
    n = pid // tiles
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        n = n.to(tl.int64)
    pix, ch = _tile((pid % tiles) * BLOCK_P, tl.program_id(1) * BLOCK_C, INT64, BLOCK_P, BLOCK_C, CH_FAST)
    mask = (pix < P) & (ch < C)
    _, di, hi, wi = split_pixel(pix, D, H, W)
    acc = tl.zeros_like(pix + ch).to(ACC)
    for m in range(0, MULT):
        oc = ch * MULT + m
        dy_cols = dy_ptr + n * sy_n + oc * sy_c
        w_cols = w_ptr + oc * sw_k
        for t in tl.static_range(T):
            od = di + pad_d - t * dil_d
            for r in tl.static_range(R):
                oh = hi + pad_h - r * dil_h
                for s in tl.static_range(S):
                    ow = wi + pad_w - s * dil_w
                    hit = (mask & _inside(od, oh, ow, OD * stride_d, OH * stride_h, OW * stride_w)
                           & (od % stride_d == 0) & (oh % stride_h == 0) & (ow % stride_w == 0))
                    at = (od // stride_d) * sy_d + (oh // stride_h) * sy_h + (ow // stride_w) * sy_w
                    g = tl.load(dy_cols + at, mask=hit, other=0)
                    wv = tl.load(w_cols + (t * sw_t + r * sw_r + s * sw_s), mask=ch < C, other=0)
                    acc += g.to(ACC) * wv.to(ACC)
    dx_ptrs = dx_ptr + n * sx_n + di * sx_d + hi * sx_h + wi * sx_w + ch * sx_c
    tl.store(dx_ptrs, acc.to(dx_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _dw_grad_weight_kernel(
    dy_ptr, x_ptr, part_ptr,
    NP, KT, MULT, D, H, W, OD, OH, OW,
    stride_d, stride_h, stride_w, pad_d, pad_h, pad_w, dil_d, dil_h, dil_w,
    sy_n, sy_c, sy_d, sy_h, sy_w, sx_n, sx_c, sx_d, sx_h, sx_w, CHUNK,
    T: tl.constexpr, R: tl.constexpr, S: tl.constexpr, ACC: tl.constexpr, INT64: tl.constexpr,
    BLOCK_P: tl.constexpr, BLOCK_C: tl.constexpr, CH_FAST: tl.constexpr,
):
    """part[split, oc, tap] = the sum over this split's pixels (of all images, NP in all) of dy * x for tap
    program_id(0) (fastest, so that the taps of one block of dy run together and share it in L2), channel
    block program_id(1) and split program_id(2)."""
    tap = tl.program_id(0)
    split = tl.program_id(2)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        split = split.to(tl.int64)
    s = tap % S
    r = tap // S % R
    t = tap // (S * R)
    pix, ch = _tile(0, tl.program_id(1) * BLOCK_C, INT64, BLOCK_P, BLOCK_C, CH_FAST)
    start = split * CHUNK
    stop = tl.minimum(NP, start + CHUNK)
    acc = tl.zeros_like(pix + ch).to(ACC)
    for p0 in range(start, stop, BLOCK_P):
        p = p0 + pix
        mask = (p < stop) & (ch < KT)
        n, od, oh, ow = split_pixel(p, OD, OH, OW)
        g = tl.load(dy_ptr + n * sy_n + od * sy_d + oh * sy_h + ow * sy_w + ch * sy_c, mask=mask, other=0)
        di = od * stride_d - pad_d + t * dil_d
        hi = oh * stride_h - pad_h + r * dil_h
        wi = ow * stride_w - pad_w + s * dil_w
        xv = tl.load(x_ptr + n * sx_n + di * sx_d + hi * sx_h + wi * sx_w + (ch // MULT) * sx_c,
                     mask=mask & _inside(di, hi, wi, D, H, W), other=0)
        acc += g.to(ACC) * xv.to(ACC)
    offs_c = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        offs_c = offs_c.to(tl.int64)
    if CH_FAST:
        total = reduce_sum(acc, 0)
    else:
        total = reduce_sum(acc, 1)
    part = part_ptr + split * (KT * T * R * S) + offs_c * (T * R * S) + tap
    tl.store(part, total.to(part_ptr.dtype.element_ty), mask=offs_c < KT)


_forward = Launcher(_dw_forward_kernel)
_grad_input = Launcher(_dw_grad_input_kernel)
_grad_weight = Launcher(_dw_grad_weight_kernel)


# --------------------------------------------------------------------------- launchers


def _blocks(t5: torch.Tensor, pixels: int, channels: int) -> tuple[int, int, bool]:
    """(BLOCK_P, BLOCK_C, CH_FAST) for an operand t5 (N, C, D, H, W) read along its innermost dimension."""
    if t5.shape[1] > 1 and t5.stride(1) == 1:  # channels-last: wide channel blocks
        block_c = min(CHANNELS_LAST_BLOCK_C, triton.next_power_of_2(channels))
        return max(1, TILE // block_c), block_c, True
    block_p = min(NCHW_BLOCK_P, triton.next_power_of_2(pixels))
    return block_p, min(TILE // block_p, triton.next_power_of_2(channels)), False


def is_depthwise(geo) -> bool:
    """One input channel per group: groups == input channels, output channels a multiple of them."""
    return geo.c == 1


def depthwise_forward(geo, bias, y5: torch.Tensor) -> None:
    x5, w5 = geo.x5, geo.w5
    kt, pixels = w5.shape[0], geo.out[0] * geo.out[1] * geo.out[2]
    block_p, block_c, ch_fast = _blocks(x5, pixels, kt)
    grid = (x5.shape[0] * cdiv(pixels, block_p), cdiv(kt, block_c))
    _forward(grid, x5, w5, bias if bias is not None else y5, y5, pixels, kt, geo.k, *x5.shape[2:], *geo.out,
             *geo.stride, *geo.padding, *geo.dilation, *x5.stride(), w5.stride(0), *w5.stride()[2:],
             *y5.stride(), bias.stride(0) if bias is not None else 0, *geo.taps, bias is not None,
             TL_ACC[x5.dtype], needs_int64(x5, w5, y5), block_p, block_c, ch_fast)


def depthwise_grad_input(geo, dy5: torch.Tensor, dx5: torch.Tensor) -> None:
    w5 = geo.w5
    c, pixels = dx5.shape[1], dx5.shape[2] * dx5.shape[3] * dx5.shape[4]
    block_p, block_c, ch_fast = _blocks(dx5, pixels, c)
    grid = (dx5.shape[0] * cdiv(pixels, block_p), cdiv(c, block_c))
    _grad_input(grid, dy5, w5, dx5, pixels, c, geo.k, *dx5.shape[2:], *geo.out, *geo.stride, *geo.padding,
                *geo.dilation, *dy5.stride(), w5.stride(0), *w5.stride()[2:], *dx5.stride(), *geo.taps,
                TL_ACC[dy5.dtype], needs_int64(dy5, w5, dx5), block_p, block_c, ch_fast)


def depthwise_grad_weight(geo, dy5: torch.Tensor, dw: torch.Tensor, sm_count: int) -> None:
    """dw (contiguous, (M*C, 1, *taps)) from dy5 and the input, split over programs as the SMs ask."""
    x5 = geo.x5
    kt, taps = dw.shape[0], geo.taps[0] * geo.taps[1] * geo.taps[2]
    np_ = x5.shape[0] * geo.out[0] * geo.out[1] * geo.out[2]
    block_p, block_c, ch_fast = _blocks(dy5, np_, kt)
    programs = taps * cdiv(kt, block_c)
    split = max(1, min(cdiv(PROGRAMS_PER_SM * sm_count, programs), np_ // MIN_PIXELS_PER_SPLIT, 65535))
    chunk = cdiv(np_, split)
    acc_dtype = torch.float64 if dw.dtype == torch.float64 else torch.float32
    part = dw if split == 1 else torch.empty((split, *dw.shape), dtype=acc_dtype, device=dw.device)
    _grad_weight((taps, cdiv(kt, block_c), split), dy5, x5, part, np_, kt, geo.k, *x5.shape[2:], *geo.out,
                 *geo.stride, *geo.padding, *geo.dilation, *dy5.stride(), *x5.stride(), chunk, *geo.taps,
                 TL_ACC[dy5.dtype], needs_int64(dy5, x5, part), block_p, block_c, ch_fast)
    if split > 1:
        sum_splits(part, dw, split)

