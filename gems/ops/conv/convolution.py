"""convolution: ``aten::convolution``, what F.conv1d/conv2d/conv3d and nn.Conv*d reach.

``conv1d``, ``conv2d``, ``conv3d`` and their ``.padding`` overloads ("same"/"valid") are
CompositeImplicitAutograd: they decompose into ``convolution`` (ATen would then take ``_convolution``
and a backend kernel such as cuDNN), which gems serves here with one implicit-GEMM kernel for 1-d, 2-d
and 3-d (gems/ops/conv/implicit_gemm.py), depthwise ones (one input channel per group) with the direct
kernel of gems/ops/conv/depthwise.py; its samples expect ``convolution``. Autograd's derivative of
``convolution`` is ``convolution_backward`` (convolution_backward.py). Transposed convolution is left
to ATen (a deliberate fallback).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from gems.dtypes import FLOATS
from gems.ops.blas.tuning import launch_tuned
from gems.ops.conv.depthwise import depthwise_forward, is_depthwise
from gems.ops.conv.implicit_gemm import (
    TL_ACC,
    as_3d,
    channels_innermost,
    channels_last,
    conv_perf,
    conv_tuned,
    geometry,
    grouped_tile,
    needs_int64,
    precision,
    split_pixel,
    split_tap,
)
from gems.runtime.launch import cdiv
from gems.spec import OpSpec, lazy

# Images of at least this many output pixels are tiled one image at a time (PER_IMAGE): a tile's rows are
# then consecutive pixels of an NCHW result and its stores vectors; below it the last tile of each image
# is partly padding and tiles run over the flattened batch. Measured on the H100 (ResNet-50 3x3 layers,
# batch 32, fp16, a one-off bench: tools/conv_variants.py in git history at ca8e18b): 56 x 56 per image
# 0.079 ms vs flattened 0.085 (bf16 0.085 vs 0.103); 28 x 28 (784 pixels, 7 x 128 rows = 896 computed)
# flattened 0.067 vs per image 0.073 (one config); 14 x 14 per image 0.165 vs 0.064, 7 x 7 0.092 vs 0.070.
# The threshold lies in (784, 3136].
PER_IMAGE_MIN_PIXELS = 1024
# A pointwise convolution (1x1, stride 1, no padding) over x with contiguous pixels (NCHW) and an NCHW
# result of at least this many pixels reads x in place as a (pixel x channel) matrix, in one-image tiles,
# instead of copying x to NHWC first. Measured (H100, 32 x 256 x 56 x 56 -> 64, fp16): in place 0.037 ms,
# the same tiles after the copy 0.225, flattened after the copy 0.244 (cuDNN 0.051): the copy costs far
# more than the padding of a 28 x 28 image's last tile, so these keep one-image tiles down to 512 pixels.
POINTWISE_MIN_PIXELS = 512

# --------------------------------------------------------------------------- kernel


@conv_tuned("x_ptr", ["M", "C", "K", "T", "R", "S", "stride_h", "stride_w"], lambda a: a["M"] * a["K"])
@triton.heuristics({"EVEN_C": lambda args: args["C"] % args["BLOCK_K"] == 0})
@triton.jit
def _conv_forward_kernel(
    x_ptr, w_ptr, bias_ptr, y_ptr,
    M, NB, P, C, K, D, H, W, OD, OH, OW, T, R, S,
    stride_d, stride_h, stride_w, pad_d, pad_h, pad_w, dil_d, dil_h, dil_w,
    sx_n, sx_c, sx_d, sx_h, sx_w,
    sw_k, sw_c, sw_t, sw_r, sw_s,
    sy_n, sy_c, sy_d, sy_h, sy_w, s_bias,
    HAS_BIAS: tl.constexpr, FLAT: tl.constexpr, PER_IMAGE: tl.constexpr, X_PIXELS: tl.constexpr,
    PRECISION: tl.constexpr, ACC: tl.constexpr, INT64: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    EVEN_C: tl.constexpr,
):
    """y[n, g*K + k, o] = bias[g*K + k] + sum over c < C and taps of x[n, g*C + c, o*stride - pad + tap*dil] *
    w[g*K + k, c, tap]: a (M = NB*P output pixels, P = OD*OH*OW per image) x K tile of group g =
    program_id(1) per program. PER_IMAGE: a tile holds pixels of one image (y's pixels are contiguous,
    NCHW, so its stores are vectors along the tile's rows); X_PIXELS (1x1, stride 1, no padding, x's pixels
    contiguous): x is read in place as a (pixels x channels) matrix, its rows contiguous, no NHWC copy."""
    offs_k = tl.arange(0, BLOCK_K)
    if PER_IMAGE:
        tiles = (P + BLOCK_M - 1) // BLOCK_M
        pid_m, pid_n = grouped_tile(tl.program_id(0), NB * tiles * BLOCK_M, K, BLOCK_M, BLOCK_N, GROUP_M)
        offs_p = (pid_m % tiles) * BLOCK_M + tl.arange(0, BLOCK_M)
        n = tl.zeros_like(offs_p) + pid_m // tiles  # one image: constant along the tile (a splat)
        mask_m = offs_p < P
    else:
        pid_m, pid_n = grouped_tile(tl.program_id(0), M, K, BLOCK_M, BLOCK_N, GROUP_M)
        offs_p = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        mask_m = offs_p < M
        n = offs_p // P
        offs_p = offs_p % P
    g = tl.program_id(1)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        g = g.to(tl.int64)
        n = n.to(tl.int64)
        offs_p = offs_p.to(tl.int64)
        offs_n = offs_n.to(tl.int64)
    mask_n = offs_n < K
    _, od, oh, ow = split_pixel(offs_p, OD, OH, OW)
    d0 = od * stride_d - pad_d
    h0 = oh * stride_h - pad_h
    w0 = ow * stride_w - pad_w
    x_rows = x_ptr + n * sx_n + g * C * sx_c
    # Columns past K wrap onto valid ones: weight loads need no column mask (those results are not stored).
    w_cols = w_ptr + (g * K + offs_n % K) * sw_k
    acc = tl.full([BLOCK_M, BLOCK_N], 0, ACC)
    if X_PIXELS:
        # A pointwise convolution is a GEMM over x's (channel, pixel) planes: rows at unit stride.
        for c0 in range(0, C, BLOCK_K):
            cs = c0 + offs_k
            a_ptrs = (x_rows + offs_p)[:, None] + cs[None, :] * sx_c
            b_ptrs = w_cols[None, :] + cs[:, None] * sw_c
            if EVEN_C:
                a = tl.load(a_ptrs, mask=mask_m[:, None], other=0)
                b = tl.load(b_ptrs)
            else:
                mask_c = cs < C
                a = tl.load(a_ptrs, mask=mask_m[:, None] & mask_c[None, :], other=0)
                b = tl.load(b_ptrs, mask=mask_c[:, None], other=0)
            acc = tl.dot(a, b, acc, input_precision=PRECISION, out_dtype=ACC)
    elif FLAT:
        # Reduction over (c, t, r, s) flattened: few channels per group.
        n_red = C * T * R * S
        for k0 in range(0, n_red, BLOCK_K):
            q = k0 + offs_k
            mask_q = q < n_red
            c, t, r, s = split_tap(q, T, R, S)
            di = d0[:, None] + (t * dil_d)[None, :]
            hi = h0[:, None] + (r * dil_h)[None, :]
            wi = w0[:, None] + (s * dil_w)[None, :]
            inside = (di >= 0) & (di < D) & (hi >= 0) & (hi < H) & (wi >= 0) & (wi < W)
            a = tl.load(x_rows[:, None] + c[None, :] * sx_c + di * sx_d + hi * sx_h + wi * sx_w,
                        mask=mask_m[:, None] & mask_q[None, :] & inside, other=0)
            b = tl.load(w_cols[None, :] + (c * sw_c + t * sw_t + r * sw_r + s * sw_s)[:, None],
                        mask=mask_q[:, None], other=0)
            acc = tl.dot(a, b, acc, input_precision=PRECISION, out_dtype=ACC)
    else:
        # One step per (tap, BLOCK_K channels), tap-major: one loop, so that Triton pipelines its loads.
        c_blocks = (C + BLOCK_K - 1) // BLOCK_K
        for step in range(0, T * R * S * c_blocks):
            tap = step // c_blocks
            cs = (step % c_blocks) * BLOCK_K + offs_k
            s = tap % S
            r = (tap // S) % R
            t = tap // (S * R)
            di = d0 + t * dil_d
            hi = h0 + r * dil_h
            wi = w0 + s * dil_w
            valid = mask_m & (di >= 0) & (di < D) & (hi >= 0) & (hi < H) & (wi >= 0) & (wi < W)
            a_ptrs = (x_rows + di * sx_d + hi * sx_h + wi * sx_w)[:, None] + cs[None, :] * sx_c
            b_ptrs = w_cols[None, :] + cs[:, None] * sw_c + (t * sw_t + r * sw_r + s * sw_s)
            if EVEN_C:  # no channel mask: loads of consecutive channels stay vectors
                a = tl.load(a_ptrs, mask=valid[:, None], other=0)
                b = tl.load(b_ptrs)
            else:
                mask_c = cs < C
                a = tl.load(a_ptrs, mask=valid[:, None] & mask_c[None, :], other=0)
                b = tl.load(b_ptrs, mask=mask_c[:, None], other=0)
            acc = tl.dot(a, b, acc, input_precision=PRECISION, out_dtype=ACC)
    if HAS_BIAS:
        acc += tl.load(bias_ptr + (g * K + offs_n) * s_bias, mask=mask_n, other=0).to(ACC)[None, :]
    if PER_IMAGE:  # y's pixels are contiguous (sy_w == 1, sy_h == OW, sy_d == OH * OW)
        y_rows = n * sy_n + offs_p
    else:
        y_rows = n * sy_n + od * sy_d + oh * sy_h + ow * sy_w
    y_ptrs = y_ptr + y_rows[:, None] + (g * K + offs_n)[None, :] * sy_c
    tl.store(y_ptrs, acc.to(y_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


# --------------------------------------------------------------------------- launcher


def conv_forward(geo, bias, layout_of) -> torch.Tensor:
    """The convolution of a checked :class:`Geometry`, allocated in the layout ATen gives ``layout_of``."""
    x5, w5 = geo.x5, geo.w5
    y = torch.empty(geo.out_shape, dtype=x5.dtype, device=x5.device, memory_format=channels_last(*layout_of))
    if y.numel() == 0:
        return y
    y5 = as_3d(y, y.dim() - 2)
    if is_depthwise(geo):
        depthwise_forward(geo, bias, y5)
        return y
    od, oh, ow = geo.out
    pixels = od * oh * ow
    y_pixels = y5[0, 0].is_contiguous()  # NCHW result: a tile's rows are consecutive addresses
    x_pixels = (y_pixels and pixels >= POINTWISE_MIN_PIXELS and not geo.flat_forward and geo.taps == (1, 1, 1)
                and geo.stride == (1, 1, 1) and geo.padding == (0, 0, 0) and x5[0, 0].is_contiguous())
    per_image = x_pixels or (y_pixels and pixels >= PER_IMAGE_MIN_PIXELS)
    if not geo.flat_forward:
        x5 = x5 if x_pixels else channels_innermost(x5)
        w5 = channels_innermost(w5)
    m = x5.shape[0] * pixels
    t, r, s = geo.taps

    def grid(meta):
        rows = x5.shape[0] * cdiv(pixels, meta["BLOCK_M"]) if per_image else cdiv(m, meta["BLOCK_M"])
        return rows * cdiv(geo.k, meta["BLOCK_N"]), geo.groups

    launch_tuned(_conv_forward_kernel, grid, x5, w5, bias if bias is not None else y5, y5,
                 m, x5.shape[0], pixels, geo.c, geo.k, *x5.shape[2:], od, oh, ow, t, r, s,
                 *geo.stride, *geo.padding, *geo.dilation,
                 *x5.stride(), *w5.stride(), *y5.stride(), bias.stride(0) if bias is not None else 0,
                 bias is not None, geo.flat_forward, per_image, x_pixels, precision(x5.dtype, x5.device),
                 TL_ACC[x5.dtype], needs_int64(x5, w5, y5))
    return y


# --------------------------------------------------------------------------- ATen overload


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    geo = geometry(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
    return conv_forward(geo, bias, (input, weight))


SPECS = [
    OpSpec(
        name="convolution", family="conv",
        impls={"convolution": convolution},
        call=torch.ops.aten.convolution.default,
        samples=lazy("gems.testing.samples_conv", "convolution_samples"),
        dtypes=FLOATS, tolerance="reduction", perf=conv_perf(),
        deliberate_fallbacks={"transposed": "transposed convolution is left to ATen"},
        no_launch={"empty-batch": "an empty result needs no kernel"},
    ),
]
