"""The window pooling kernels of avg_pool2d and max_pool2d_with_indices, forward and backward, and ATen's checks
of their arguments.

Output (oh, ow) pools the window of input rows oh * stride_h - pad_h + kh * dilation_h (kh < kernel_h), and
columns likewise, that lie inside the input:

    avg  the sum (fp32, fp64 for float64, from +0.0) divided by divisor_override, else by the window's size
         counting the padding up to input + pad (count_include_pad) or not
    max  the largest element and its flat index h * W + w in the plane: the first strict maximum in row-major
         window order, or the last NaN (ATen's CUDA kernels: ``val > max || isnan(val)``)

The backward is output-indexed (as ATen's CUDA kernels): each grad_input element sums, over the windows that
cover it, the window's gradient divided by its divisor (avg) or, where the window's index names it, the
window's gradient (max). Windows are unrolled when they have few taps (loads in flight at once), looped over
otherwise (a global pooling's 56 x 56 window).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from gems.ops.pointwise.shared import div_rn
from gems.ops.pooling.shared import ACC, five_d, image_tile, needs_int64, tile_config, tile_walk
from gems.ops.shape.shared import suggest_memory_format
from gems.runtime.launch import Launcher, cdiv

UNROLLED_TAPS = 64  # windows (or covering windows, backward) up to this many taps are unrolled


def pair(values, name: str, what: str, default=None) -> tuple[int, int]:
    """ATen's one-or-two-ints argument (kernel_size, stride, padding, dilation) as (h, w)."""
    values = [values] if isinstance(values, int) else list(values)
    if not values and default is not None:
        return default
    if len(values) not in (1, 2):
        raise RuntimeError(f"{name}: {what}")
    return int(values[0]), int(values[-1])


def output_size(size: int, kernel: int, pad: int, stride: int, dilation: int, ceil_mode: bool) -> int:
    """ATen's pooling_output_shape, with its checks."""
    if stride == 0:
        raise RuntimeError("stride should not be zero")
    if pad < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {pad}")
    if pad > int(((kernel - 1) * dilation + 1) / 2):  # C++'s division: toward zero (a negative dilation)
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={pad}, "
                           f"kernel_size={kernel} and dilation={dilation}")
    span = size + 2 * pad - dilation * (kernel - 1) - 1 + (stride - 1 if ceil_mode else 0)
    out = span // stride + 1  # div_rtn: floor
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1  # the last window starts inside the input or its left padding
    return out


def check_shape(x: torch.Tensor, kernel, stride, pad, dilation, out_hw, channels_last_required: bool) -> None:
    """ATen's pool2d_shape_check."""
    (kh, kw), (dh, dw), (ph, pw), (dil_h, dil_w) = kernel, stride, pad, dilation
    if kw <= 0 or kh <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {kh} kW: {kw}")
    if dw <= 0 or dh <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got dH: {dh} dW: {dw}")
    if dil_h <= 0 or dil_w <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: {dil_h} dilationW: {dil_w}")
    nonempty = x.shape[1] != 0 and x.shape[2] != 0
    if channels_last_required:
        ok = x.dim() == 4 and nonempty and x.shape[3] != 0
    else:
        ok = (x.dim() == 3 and x.shape[0] != 0 and nonempty) or (x.dim() == 4 and nonempty and x.shape[3] != 0)
    if not ok:
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:"
                           f"{list(x.shape)}")
    if kw // 2 < pw or kh // 2 < ph:
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got padW = {pw}, padH = "
                           f"{ph}, kW = {kw}, kH = {kh}")
    if out_hw[0] < 1 or out_hw[1] < 1:
        raise RuntimeError(f"Given input size: ({x.shape[-3]}x{x.shape[-2]}x{x.shape[-1]}). Calculated output size: "
                           f"({x.shape[-3]}x{out_hw[0]}x{out_hw[1]}). Output size is too small")


def check_dim_size(t: torch.Tensor, dims: int, dim: int, size: int) -> None:
    """ATen's check_dim_size."""
    if t.dim() != dims or t.shape[dim] != size:
        raise RuntimeError(f"Expected a tensor of dimension {dims} and tensor.size[{dim}] == {size} but got: "
                           f"dimension {t.dim()} and tensor.size[{dim}] = {t.shape[dim] if dim < t.dim() else '?'}")


@triton.jit
def _pool_tap(x_base, h0, w0, kh, kw, H, W, dil_h, dil_w, sx_h, sx_w, mask, acc, arg, IS_MAX: tl.constexpr):
    """Fold one window tap into the running sum (avg) or the running maximum and its index (max)."""
    ih = h0 + kh * dil_h
    iw = w0 + kw * dil_w
    ok = mask & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
    if IS_MAX:  # a tap outside the input reads -inf: never taken
        v = tl.load(x_base + ih * sx_h + iw * sx_w, mask=ok, other=float("-inf")).to(acc.dtype)
        take = (v > acc) | (v != v)  # a larger one, or a NaN
        acc = tl.where(take, v, acc)
        arg = tl.where(take, ih * W + iw, arg)
    else:
        acc += tl.load(x_base + ih * sx_h + iw * sx_w, mask=ok, other=0).to(acc.dtype)
    return acc, arg


@triton.jit
def _first_inside(start, dilation):
    """The first of the taps start + k * dilation (k >= 0) at or past 0."""
    return tl.where(start < 0, start + (0 - start + dilation - 1) // dilation * dilation, start)


@triton.jit
def _divisor(h0, w0, KH: tl.constexpr, KW: tl.constexpr, H, W, pad_h, pad_w, divisor,
             HAS_DIVISOR: tl.constexpr, COUNT_PAD: tl.constexpr):
    """(divisor, whether the window holds any input element) of the average windows starting at (h0, w0)."""
    h_end = tl.minimum(h0 + KH, H + pad_h)
    w_end = tl.minimum(w0 + KW, W + pad_w)
    pool = (h_end - h0) * (w_end - w0)
    inside = (tl.minimum(h_end, H) - tl.maximum(h0, 0)) * (tl.minimum(w_end, W) - tl.maximum(w0, 0))
    if HAS_DIVISOR:
        d = pool * 0 + divisor
    elif COUNT_PAD:
        d = pool
    else:
        d = inside
    return d, (tl.maximum(h0, 0) < tl.minimum(h_end, H)) & (tl.maximum(w0, 0) < tl.minimum(w_end, W))


@triton.jit
def _pool_kernel(x_ptr, y_ptr, idx_ptr, C, H, W, OH, OW, n_rows, n_cols, tiles_c, sx_n, sx_c, sx_h, sx_w,
                 sy_n, sy_c, sy_h, sy_w, si_n, si_c, si_h, si_w, stride_h, stride_w, pad_h, pad_w, dil_h, dil_w,
                 divisor, KH: tl.constexpr, KW: tl.constexpr, IS_MAX: tl.constexpr, HAS_VALUES: tl.constexpr,
                 HAS_DIVISOR: tl.constexpr, COUNT_PAD: tl.constexpr, UNROLL: tl.constexpr, ACC_T: tl.constexpr,
                 CL: tl.constexpr, INT64: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    """y (N, C, OH, OW) pooled from x (N, C, H, W); max also writes the indices (and, without HAS_VALUES, only
    them: max_pool2d_backward's argmax)."""
    n, c, _, oh, ow, mask = image_tile(C, 1, OH, OW, n_rows, n_cols, tiles_c, CL, INT64, BLOCK_R, BLOCK_C)
    h0 = oh * stride_h - pad_h
    w0 = ow * stride_w - pad_w
    x_base = x_ptr + n * sx_n + c * sx_c
    if IS_MAX:  # a window of -inf names its first tap inside the input, as ATen's (int32 unless INT64)
        acc = tl.full([BLOCK_R, BLOCK_C], float("-inf"), ACC_T)
        arg = tl.broadcast_to(_first_inside(h0, dil_h) * W + _first_inside(w0, dil_w), [BLOCK_R, BLOCK_C])
    else:
        acc = tl.zeros([BLOCK_R, BLOCK_C], ACC_T)
        arg = acc  # unused
    if UNROLL:
        for kh in tl.static_range(KH):
            for kw in tl.static_range(KW):
                acc, arg = _pool_tap(x_base, h0, w0, kh, kw, H, W, dil_h, dil_w, sx_h, sx_w, mask, acc, arg, IS_MAX)
    else:
        for kh in range(KH):
            for kw in range(KW):
                acc, arg = _pool_tap(x_base, h0, w0, kh, kw, H, W, dil_h, dil_w, sx_h, sx_w, mask, acc, arg, IS_MAX)
    if IS_MAX:
        tl.store(idx_ptr + n * si_n + c * si_c + oh * si_h + ow * si_w, arg.to(tl.int64), mask=mask)
    else:
        d, nonempty = _divisor(h0, w0, KH, KW, H, W, pad_h, pad_w, divisor, HAS_DIVISOR, COUNT_PAD)
        acc = tl.where(nonempty, div_rn(acc, d.to(ACC_T)), 0.0)
    if HAS_VALUES:
        tl.store(y_ptr + n * sy_n + c * sy_c + oh * sy_h + ow * sy_w, acc.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _covering(i, pad, size_out, stride, EXTENT: tl.constexpr):
    """The first output window (of EXTENT inputs) covering input coordinate i, and the end of their range."""
    first = tl.where(i + pad < EXTENT, 0, (i + pad - EXTENT) // stride + 1)
    return first, tl.minimum((i + pad) // stride + 1, size_out)


@triton.jit
def _unpool_tap(go_base, i_base, oh, ow, h, w, W, s_go_h, s_go_w, s_i_h, s_i_w, ok, acc, stride_h, stride_w,
                pad_h, pad_w, H, divisor, KH: tl.constexpr, KW: tl.constexpr, IS_MAX: tl.constexpr,
                HAS_DIVISOR: tl.constexpr, COUNT_PAD: tl.constexpr):
    """Add window (oh, ow)'s share of its gradient to the elements (h, w) it covers."""
    if IS_MAX:
        index = tl.load(i_base + oh * s_i_h + ow * s_i_w, mask=ok, other=-1)
        ok = ok & (index == h * W + w)
        acc += tl.load(go_base + oh * s_go_h + ow * s_go_w, mask=ok, other=0).to(acc.dtype)
    else:
        d, nonempty = _divisor(oh * stride_h - pad_h, ow * stride_w - pad_w, KH, KW, H, W, pad_h, pad_w, divisor,
                               HAS_DIVISOR, COUNT_PAD)
        ok = ok & nonempty
        g = tl.load(go_base + oh * s_go_h + ow * s_go_w, mask=ok, other=0).to(acc.dtype)
        acc += tl.where(ok, div_rn(g, d.to(acc.dtype)), 0.0)
    return acc


@triton.jit
def _unpool_kernel(go_ptr, idx_ptr, gi_ptr, C, H, W, OH, OW, n_rows, n_cols, tiles_c, s_go_n, s_go_c, s_go_h,
                   s_go_w, s_i_n, s_i_c, s_i_h, s_i_w, s_gi_n, s_gi_c, s_gi_h, s_gi_w, stride_h, stride_w, pad_h,
                   pad_w, divisor, KH: tl.constexpr, KW: tl.constexpr, EXTENT_H: tl.constexpr,
                   EXTENT_W: tl.constexpr, COVER_H: tl.constexpr, COVER_W: tl.constexpr, IS_MAX: tl.constexpr,
                   HAS_DIVISOR: tl.constexpr, COUNT_PAD: tl.constexpr, UNROLL: tl.constexpr, ACC_T: tl.constexpr,
                   CL: tl.constexpr, INT64: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    """grad_input (N, C, H, W) from grad_output (N, C, OH, OW): the windows covering each element (at most
    COVER_H x COVER_W of them; EXTENT: a window's span in the input, dilation included)."""
    n, c, _, h, w, mask = image_tile(C, 1, H, W, n_rows, n_cols, tiles_c, CL, INT64, BLOCK_R, BLOCK_C)
    first_h, end_h = _covering(h, pad_h, OH, stride_h, EXTENT_H)
    first_w, end_w = _covering(w, pad_w, OW, stride_w, EXTENT_W)
    go_base = go_ptr + n * s_go_n + c * s_go_c
    i_base = idx_ptr + n * s_i_n + c * s_i_c
    acc = tl.zeros([BLOCK_R, BLOCK_C], ACC_T)
    if UNROLL:
        for dh in tl.static_range(COVER_H):
            for dw in tl.static_range(COVER_W):
                oh = first_h + dh
                ow = first_w + dw
                acc = _unpool_tap(go_base, i_base, oh, ow, h, w, W, s_go_h, s_go_w, s_i_h, s_i_w,
                                  mask & (oh < end_h) & (ow < end_w), acc, stride_h, stride_w, pad_h, pad_w, H,
                                  divisor, KH, KW, IS_MAX, HAS_DIVISOR, COUNT_PAD)
    else:
        for dh in range(COVER_H):
            for dw in range(COVER_W):
                oh = first_h + dh
                ow = first_w + dw
                acc = _unpool_tap(go_base, i_base, oh, ow, h, w, W, s_go_h, s_go_w, s_i_h, s_i_w,
                                  mask & (oh < end_h) & (ow < end_w), acc, stride_h, stride_w, pad_h, pad_w, H,
                                  divisor, KH, KW, IS_MAX, HAS_DIVISOR, COUNT_PAD)
    tl.store(gi_ptr + n * s_gi_n + c * s_gi_c + h * s_gi_h + w * s_gi_w, acc.to(gi_ptr.dtype.element_ty),
             mask=mask)


_pool = Launcher(_pool_kernel)
_unpool = Launcher(_unpool_kernel)


def pool(x, y, indices, kernel, stride, pad, dilation, is_max, divisor=None, count_include_pad=True):
    """Fill y (None: max_pool2d_backward's argmax only) and, for max, indices from x."""
    written = y if y is not None else indices
    if written.numel() == 0:
        return
    (_, c, _, h, w), sx = five_d(x, 2)
    sizes, sy = five_d(written, 2)
    si = five_d(indices, 2)[1] if indices is not None else sy
    cl, rows, cols = tile_walk(written, sizes)
    block_r, block_c, tiles_c, num_warps = tile_config(rows, cols, x.element_size(), cl)
    _pool((tiles_c * cdiv(rows, block_r),), x, written, indices if indices is not None else written, c, h, w,
          *sizes[3:], rows, cols, tiles_c, sx[0], sx[1], sx[3], sx[4], sy[0], sy[1], sy[3], sy[4], si[0], si[1],
          si[3], si[4], *stride, *pad, *dilation, divisor or 0, *kernel, is_max, y is not None,
          divisor is not None, count_include_pad, kernel[0] * kernel[1] <= UNROLLED_TAPS, ACC[x.dtype], cl,
          needs_int64(x, written), block_r, block_c, num_warps=num_warps)


def unpool(grad_output, indices, grad_input, kernel, stride, pad, dilation, is_max, divisor=None,
           count_include_pad=True):
    """Fill grad_input from grad_output (and, for max, the indices)."""
    if grad_input.numel() == 0:
        return
    sizes, s_gi = five_d(grad_input, 2)
    (_, _, _, oh, ow), s_go = five_d(grad_output, 2)
    s_i = five_d(indices, 2)[1] if is_max else s_go
    extent = [(k - 1) * d + 1 for k, d in zip(kernel, dilation)]
    cover = [cdiv(e, s) for e, s in zip(extent, stride)]
    cl, rows, cols = tile_walk(grad_input, sizes)
    block_r, block_c, tiles_c, num_warps = tile_config(rows, cols, grad_input.element_size(), cl)
    _unpool((tiles_c * cdiv(rows, block_r),), grad_output, indices if is_max else grad_output, grad_input,
            sizes[1], *sizes[3:], oh, ow, rows, cols, tiles_c, s_go[0], s_go[1], s_go[3], s_go[4], s_i[0], s_i[1],
            s_i[3], s_i[4], s_gi[0], s_gi[1], s_gi[3], s_gi[4], *stride, *pad, divisor or 0, *kernel, *extent,
            *cover, is_max, divisor is not None, count_include_pad, cover[0] * cover[1] <= UNROLLED_TAPS,
            ACC[grad_input.dtype], cl, needs_int64(grad_output, grad_input), block_r, block_c, num_warps=num_warps)


def geometry(op: str, x: torch.Tensor, kernel_size, stride, padding, dilation, ceil_mode: bool):
    """ATen's checks of a 2-d pooling's arguments and input (op: "avg_pool2d" or "max_pool2d"); returns
    (kernel, stride, padding, dilation, output (h, w)) as pairs."""
    kernel = pair(kernel_size, op, "kernel_size must either be a single int, or a tuple of two ints")
    stride = pair(stride, op, "stride must either be omitted, a single int, or a tuple of two ints", kernel)
    pad = pair(padding, op, "padding must either be a single int, or a tuple of two ints")
    dilation = pair(dilation, op, "dilation must be either a single int, or a tuple of two ints")
    cl = x.dim() == 4 and suggest_memory_format(x) is torch.channels_last
    if op == "max_pool2d" and x.dim() not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    if x.dim() < 3:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-x.dim()}, {x.dim() - 1}], but got -3)")
    out = tuple(output_size(n, k, p, s, d, ceil_mode)
                for n, k, p, s, d in zip(x.shape[-2:], kernel, pad, stride, dilation))
    check_shape(x, kernel, stride, pad, dilation, out, cl)
    return kernel, stride, pad, dilation, out


def check_grad(grad: torch.Tensor, x: torch.Tensor, out_hw, name: str = "gradOutput") -> None:
    """ATen's checks of a pooling backward's grad_output (or indices) against the forward's output size; the
    batch size too (ATen's CPU kernels read past a smaller grad_output)."""
    dims = x.dim()
    check_dim_size(grad, dims, dims - 3, x.shape[-3])
    check_dim_size(grad, dims, dims - 2, out_hw[0])
    check_dim_size(grad, dims, dims - 1, out_hw[1])
    if dims == 4:
        check_dim_size(grad, dims, 0, x.shape[0])
