"""convolution_backward: the gradients autograd takes of ``convolution`` (F.conv1d/2d/3d, nn.Conv*d).

Three kernels, each run only where ``output_mask`` asks (the GEMM shapes are in implicit_gemm.py; depthwise
convolutions, one input channel per group, take the direct kernels of depthwise.py instead):

    grad_input   implicit GEMM over input pixels x input channels of a group, reduced over (k, tap)
                 where o * stride == i + pad - tap * dil has an integer solution inside the output
    grad_weight  implicit GEMM over output channels x (c, tap), reduced over batch and output pixels; the
                 reduction is split over SPLIT programs (few, long reductions otherwise leave most SMs
                 idle) whose partial sums, in the accumulator type, a second kernel adds in a fixed order
    grad_bias    per output channel, the sum of grad_output over batch and pixels
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from gems.dtypes import FLOATS
from gems.ops.blas.tuning import launch_tuned
from gems.ops.conv.depthwise import depthwise_grad_input, depthwise_grad_weight, is_depthwise
from gems.ops.conv.implicit_gemm import (
    FLAT_BELOW,
    TL_ACC,
    as_3d,
    channels_innermost,
    channels_last,
    conv_tuned,
    geometry,
    grouped_tile,
    needs_int64,
    precision,
    split_pixel,
    split_tap,
    sum_splits,
)
from gems.ops.reduction.planning import reduce_sum
from gems.runtime.launch import Launcher, cdiv
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, lazy

# grad_weight: aim for this many programs per SM, splitting the reduction over at least this many pixels
# per program (a nominal 128 x 128 tile decides the split before the tuner picks the real one).
PROGRAMS_PER_SM, MIN_PIXELS_PER_SPLIT, NOMINAL_TILE = 2, 1024, 128
# grad_bias: channels x pixels per step (8 x 256 fp32 values: 16 per thread at 4 warps).
BIAS_BLOCK_C, BIAS_BLOCK_P = 8, 256

# --------------------------------------------------------------------------- kernels


@conv_tuned("dy_ptr", ["M", "C", "K", "T", "R", "S", "stride_h", "stride_w"], lambda a: a["M"] * a["C"])
@triton.heuristics({"EVEN_K": lambda args: args["K"] % args["BLOCK_K"] == 0})
@triton.jit
def _conv_dx_kernel(
    dy_ptr, w_ptr, dx_ptr,
    M, C, K, D, H, W, OD, OH, OW, T, R, S,
    stride_d, stride_h, stride_w, pad_d, pad_h, pad_w, dil_d, dil_h, dil_w,
    sy_n, sy_c, sy_d, sy_h, sy_w,
    sw_k, sw_c, sw_t, sw_r, sw_s,
    sx_n, sx_c, sx_d, sx_h, sx_w,
    FLAT: tl.constexpr, PRECISION: tl.constexpr, ACC: tl.constexpr, INT64: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    EVEN_K: tl.constexpr,
):
    """dx[n, g*C + c, i] = sum over k < K and taps with o = (i + pad - tap*dil) / stride a whole output index
    of dy[n, g*K + k, o] * w[g*K + k, c, tap]: an (M = N*D*H*W) x C tile of group g per program."""
    pid_m, pid_n = grouped_tile(tl.program_id(0), M, C, BLOCK_M, BLOCK_N, GROUP_M)
    g = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        g = g.to(tl.int64)
        offs_m = offs_m.to(tl.int64)
        offs_n = offs_n.to(tl.int64)
    mask_m = offs_m < M
    mask_n = offs_n < C
    n, di, hi, wi = split_pixel(offs_m, D, H, W)
    d0 = di + pad_d
    h0 = hi + pad_h
    w0 = wi + pad_w
    dy_rows = dy_ptr + n * sy_n + g * K * sy_c
    # Columns past C wrap onto valid ones: weight loads need no column mask (those results are not stored).
    w_cols = w_ptr + g * K * sw_k + (offs_n % C) * sw_c
    acc = tl.full([BLOCK_M, BLOCK_N], 0, ACC)
    if FLAT:
        n_red = K * T * R * S
        for k0 in range(0, n_red, BLOCK_K):
            q = k0 + offs_k
            mask_q = q < n_red
            k, t, r, s = split_tap(q, T, R, S)
            od = d0[:, None] - (t * dil_d)[None, :]
            oh = h0[:, None] - (r * dil_h)[None, :]
            ow = w0[:, None] - (s * dil_w)[None, :]
            hit = ((od >= 0) & (od % stride_d == 0) & (od < OD * stride_d) & (oh >= 0) & (oh % stride_h == 0)
                   & (oh < OH * stride_h) & (ow >= 0) & (ow % stride_w == 0) & (ow < OW * stride_w))
            a = tl.load(dy_rows[:, None] + k[None, :] * sy_c + (od // stride_d) * sy_d + (oh // stride_h) * sy_h
                        + (ow // stride_w) * sy_w, mask=mask_m[:, None] & mask_q[None, :] & hit, other=0)
            b = tl.load(w_cols[None, :] + (k * sw_k + t * sw_t + r * sw_r + s * sw_s)[:, None],
                        mask=mask_q[:, None], other=0)
            acc = tl.dot(a, b, acc, input_precision=PRECISION, out_dtype=ACC)
    else:
        k_blocks = (K + BLOCK_K - 1) // BLOCK_K
        for step in range(0, T * R * S * k_blocks):
            tap = step // k_blocks
            ks = (step % k_blocks) * BLOCK_K + offs_k
            s = tap % S
            r = (tap // S) % R
            t = tap // (S * R)
            od = d0 - t * dil_d
            oh = h0 - r * dil_h
            ow = w0 - s * dil_w
            hit = (mask_m & (od >= 0) & (od % stride_d == 0) & (od < OD * stride_d) & (oh >= 0)
                   & (oh % stride_h == 0) & (oh < OH * stride_h) & (ow >= 0) & (ow % stride_w == 0)
                   & (ow < OW * stride_w))
            rows = dy_rows + (od // stride_d) * sy_d + (oh // stride_h) * sy_h + (ow // stride_w) * sy_w
            a_ptrs = rows[:, None] + ks[None, :] * sy_c
            b_ptrs = w_cols[None, :] + ks[:, None] * sw_k + (t * sw_t + r * sw_r + s * sw_s)
            if EVEN_K:  # no channel mask: loads of consecutive channels stay vectors
                a = tl.load(a_ptrs, mask=hit[:, None], other=0)
                b = tl.load(b_ptrs)
            else:
                mask_k = ks < K
                a = tl.load(a_ptrs, mask=hit[:, None] & mask_k[None, :], other=0)
                b = tl.load(b_ptrs, mask=mask_k[:, None], other=0)
            acc = tl.dot(a, b, acc, input_precision=PRECISION, out_dtype=ACC)
    dx_ptrs = (dx_ptr + (n * sx_n + di * sx_d + hi * sx_h + wi * sx_w)[:, None]
               + (g * C + offs_n)[None, :] * sx_c)
    tl.store(dx_ptrs, acc.to(dx_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


@conv_tuned("dy_ptr", ["P", "C", "K", "T", "R", "S", "SPLIT"],
            lambda a: a["K"] * a["C"] * a["T"] * a["R"] * a["S"] * a["SPLIT"])
@triton.jit
def _conv_dw_kernel(
    dy_ptr, x_ptr, dw_ptr,
    P, C, K, D, H, W, OD, OH, OW, T, R, S,
    stride_d, stride_h, stride_w, pad_d, pad_h, pad_w, dil_d, dil_h, dil_w,
    sy_n, sy_c, sy_d, sy_h, sy_w,
    sx_n, sx_c, sx_d, sx_h, sx_w,
    SPLIT, GROUPS,
    PRECISION: tl.constexpr, ACC: tl.constexpr, INT64: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    """dw[split, g*K + k, (c, tap)] = sum over pixels p = (n, o) of this split of dy[n, g*K + k, o] *
    x[n, g*C + c, o*stride - pad + tap*dil]: a K x (C*T*R*S) tile of group g, split program_id(2)."""
    n_cols = C * T * R * S
    pid_m, pid_n = grouped_tile(tl.program_id(0), K, n_cols, BLOCK_M, BLOCK_N, GROUP_M)
    g = tl.program_id(1)
    split = tl.program_id(2)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        g = g.to(tl.int64)
        split = split.to(tl.int64)
        offs_m = offs_m.to(tl.int64)
        offs_n = offs_n.to(tl.int64)
        offs_k = offs_k.to(tl.int64)
    mask_m = offs_m < K
    mask_n = offs_n < n_cols
    c, t, r, s = split_tap(offs_n, T, R, S)
    dy_rows = dy_ptr + (g * K + offs_m) * sy_c
    x_cols = x_ptr + (g * C + c) * sx_c
    chunk = ((P + SPLIT - 1) // SPLIT + BLOCK_K - 1) // BLOCK_K * BLOCK_K
    start = split * chunk
    stop = tl.minimum(P, start + chunk)
    acc = tl.full([BLOCK_M, BLOCK_N], 0, ACC)
    for p0 in range(start, stop, BLOCK_K):
        p = p0 + offs_k
        mask_p = p < stop
        n, od, oh, ow = split_pixel(p, OD, OH, OW)
        a = tl.load(dy_rows[:, None] + (n * sy_n + od * sy_d + oh * sy_h + ow * sy_w)[None, :],
                    mask=mask_m[:, None] & mask_p[None, :], other=0)
        di = (od * stride_d - pad_d)[:, None] + (t * dil_d)[None, :]
        hi = (oh * stride_h - pad_h)[:, None] + (r * dil_h)[None, :]
        wi = (ow * stride_w - pad_w)[:, None] + (s * dil_w)[None, :]
        inside = (di >= 0) & (di < D) & (hi >= 0) & (hi < H) & (wi >= 0) & (wi < W)
        b = tl.load(x_cols[None, :] + (n * sx_n)[:, None] + di * sx_d + hi * sx_h + wi * sx_w,
                    mask=mask_p[:, None] & mask_n[None, :] & inside, other=0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION, out_dtype=ACC)
    dw_ptrs = dw_ptr + split * (GROUPS * K * n_cols) + (g * K + offs_m)[:, None] * n_cols + offs_n[None, :]
    tl.store(dw_ptrs, acc.to(dw_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


@triton.jit
def _conv_db_kernel(dy_ptr, db_ptr, P, K, OD, OH, OW, sy_n, sy_c, sy_d, sy_h, sy_w, ACC: tl.constexpr,
                    INT64: tl.constexpr, BLOCK_C: tl.constexpr, BLOCK_P: tl.constexpr):
    """db[k] = sum over n and output pixels of dy[n, k, o]: BLOCK_C channels per program."""
    offs_c = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    offs_p = tl.arange(0, BLOCK_P)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        offs_c = offs_c.to(tl.int64)
        offs_p = offs_p.to(tl.int64)
    mask_c = offs_c < K
    acc = tl.full([BLOCK_C, BLOCK_P], 0, ACC)
    for p0 in range(0, P, BLOCK_P):
        p = p0 + offs_p
        n, od, oh, ow = split_pixel(p, OD, OH, OW)
        at = offs_c[:, None] * sy_c + (n * sy_n + od * sy_d + oh * sy_h + ow * sy_w)[None, :]
        acc += tl.load(dy_ptr + at, mask=mask_c[:, None] & (p < P)[None, :], other=0).to(ACC)
    tl.store(db_ptr + offs_c, reduce_sum(acc, 1).to(db_ptr.dtype.element_ty), mask=mask_c)


_db_launcher = Launcher(_conv_db_kernel)


# --------------------------------------------------------------------------- launchers


def _sm_count(device: torch.device) -> int:
    if device.type == "cuda":  # unreached on the interpreter: CUDA
        return torch.cuda.get_device_properties(device).multi_processor_count
    return 1  # the interpreter runs programs one after another: never split


def _grad_input(geo, dy5, dx5):
    m = dx5.shape[0] * dx5.shape[2] * dx5.shape[3] * dx5.shape[4]
    t, r, s = geo.taps
    flat, w5 = geo.k < FLAT_BELOW, geo.w5
    if not flat:  # the reduction runs over output channels: those innermost in dy (and weight's c, its columns)
        dy5, w5 = channels_innermost(dy5), channels_innermost(w5)
    grid = lambda meta: (cdiv(m, meta["BLOCK_M"]) * cdiv(geo.c, meta["BLOCK_N"]), geo.groups)  # noqa: E731
    launch_tuned(_conv_dx_kernel, grid, dy5, w5, dx5, m, geo.c, geo.k, *dx5.shape[2:], *geo.out, t, r, s,
                 *geo.stride, *geo.padding, *geo.dilation, *dy5.stride(), *w5.stride(), *dx5.stride(),
                 flat, precision(dy5.dtype, dy5.device), TL_ACC[dy5.dtype], needs_int64(dy5, w5, dx5))


def _grad_weight(geo, dy5, dw):
    x5 = geo.x5
    p = x5.shape[0] * geo.out[0] * geo.out[1] * geo.out[2]
    t, r, s = geo.taps
    n_cols = geo.c * t * r * s
    tiles = cdiv(geo.k, NOMINAL_TILE) * cdiv(n_cols, NOMINAL_TILE) * geo.groups
    split = max(1, min(cdiv(PROGRAMS_PER_SM * _sm_count(dy5.device), tiles), p // MIN_PIXELS_PER_SPLIT))
    acc_dtype = torch.float64 if dw.dtype == torch.float64 else torch.float32
    part = dw if split == 1 else torch.empty((split, *dw.shape), dtype=acc_dtype, device=dw.device)
    grid = lambda meta: (cdiv(geo.k, meta["BLOCK_M"]) * cdiv(n_cols, meta["BLOCK_N"]), geo.groups, split)  # noqa: E731
    launch_tuned(_conv_dw_kernel, grid, dy5, x5, part, p, geo.c, geo.k, *x5.shape[2:], *geo.out, t, r, s,
                 *geo.stride, *geo.padding, *geo.dilation, *dy5.stride(), *x5.stride(), split, geo.groups,
                 precision(dy5.dtype, dy5.device), TL_ACC[dy5.dtype], needs_int64(dy5, x5, part))
    if split > 1:
        sum_splits(part, dw, split)


def _grad_bias(dy5, db):
    p = dy5.shape[0] * dy5.shape[2] * dy5.shape[3] * dy5.shape[4]
    _db_launcher((cdiv(db.numel(), BIAS_BLOCK_C),), dy5, db, p, db.numel(), *dy5.shape[2:], *dy5.stride(),
                 TL_ACC[dy5.dtype], needs_int64(dy5), BIAS_BLOCK_C, BIAS_BLOCK_P)


# --------------------------------------------------------------------------- ATen overload


def convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
                         output_padding, groups, output_mask):
    geo = geometry(input, weight, None, stride, padding, dilation, transposed, output_padding, groups)
    if tuple(grad_output.shape) != tuple(geo.out_shape):
        raise RuntimeError(f"Expected grad_output of size {list(geo.out_shape)}, but got {list(grad_output.shape)}")
    if grad_output.dtype != input.dtype or grad_output.device != input.device:
        raise Fallback("grad_output of another dtype or device than the input")
    dy5 = as_3d(grad_output, grad_output.dim() - 2)
    dx = dw = db = None
    if output_mask[0]:
        dx = torch.empty(input.shape, dtype=input.dtype, device=input.device,
                         memory_format=channels_last(input, weight))
        if dx.numel():
            (depthwise_grad_input if is_depthwise(geo) else _grad_input)(geo, dy5, as_3d(dx, dx.dim() - 2))
    if output_mask[1]:
        dw = torch.empty(weight.shape, dtype=weight.dtype, device=weight.device)
        if dw.numel() and is_depthwise(geo):
            depthwise_grad_weight(geo, dy5, dw, _sm_count(dw.device))
        elif dw.numel():
            _grad_weight(geo, dy5, dw)
    if output_mask[2]:
        db = torch.empty(weight.shape[0], dtype=grad_output.dtype, device=grad_output.device)
        if db.numel():
            _grad_bias(dy5, db)
    return dx, dw, db


SPECS = [
    OpSpec(
        name="convolution_backward", family="conv",
        impls={"convolution_backward": convolution_backward},
        call=torch.ops.aten.convolution_backward.default,
        samples=lazy("gems.testing.samples_conv", "convolution_backward_samples"),
        dtypes=FLOATS, tolerance="reduction",
        deliberate_fallbacks={"transposed": "transposed convolution is left to ATen"},
    ),
]
