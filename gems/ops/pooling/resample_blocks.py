"""A nearest (or nearest-exact) resampling by whole power-of-two factors, x2 upsampling above all: each input is
copied to a whole block of outputs. The forward loads each input tile once and stores it to the block
(_blocks_forward_kernel), its backward gathers the block, every load in flight at once (_blocks_backward_kernel).
resample.py takes these paths where whole_factors finds such factors; its general kernels serve the rest.
"""

from __future__ import annotations

import math

import triton
import triton.language as tl

from gems.ops.pooling.shared import ACC, image_tile, needs_int64, tile_config, tile_walk
from gems.runtime.launch import Launcher, next_power_of_2

_UNROLLED_BLOCK = 64  # a nearest resampling by whole factors copies (gathers) blocks up to this many elements
# A nearest forward by whole factors (_blocks_forward_kernel): bytes written per program, warps at most.
BLOCKS_OUT_BYTES = 16384
BLOCKS_WARPS = 4


@triton.jit
def _blocks_forward_kernel(x_ptr, y_ptr, C, ID, IH, IW, n_rows, n_cols, tiles_c, sx_n, sx_c, sx_d, sx_h, sx_w,
                           sy_n, sy_c, sy_d, sy_h, sy_w, KD: tl.constexpr, KH: tl.constexpr, KW: tl.constexpr,
                           LOG_KW: tl.constexpr, LOAD_VEC: tl.constexpr, CL: tl.constexpr, INT64: tl.constexpr,
                           BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    """y = x upsampled (nearest) by whole factors (KD, KH, KW = 2^LOG_KW), walked over x's tile: each tile loads
    once, in vectors, and is stored to the KD x KH x KW block of outputs that copy it. NCHW (CL false): the
    columns are w, each repeated KW times in registers (interleaved with itself) so that an output row's
    stores are consecutive, in vectors; their columns and mask come from aranges (Triton proves no contiguity
    through an interleave)."""
    n, c, d, h, w, mask = image_tile(C, ID, IH, IW, n_rows, n_cols, tiles_c, CL, INT64, BLOCK_R, BLOCK_C)
    # LOAD_VEC (NCHW, x's w contiguous): loads of 16 / KW bytes a lane, which the widening makes the stores'
    # 16 bytes a lane in the same threads (else 16-byte loads widen to 32 bytes a lane, converted through
    # shared memory into the stores' layout: sm_90, triton 3.6).
    x_ptrs = x_ptr + n * sx_n + c * sx_c + d * sx_d + h * sx_h + w * sx_w
    if not CL:
        x_ptrs = tl.max_contiguous(x_ptrs, [1, LOAD_VEC])
    v = tl.load(x_ptrs, mask=mask)
    y_base = y_ptr + n * sy_n + c * sy_c + d * (KD * sy_d) + h * (KH * sy_h)
    if CL:
        for e in tl.static_range(KW):
            for a in tl.static_range(KD):
                for b in tl.static_range(KH):
                    tl.store(y_base + a * sy_d + b * sy_h + (w * KW + e) * sy_w, v, mask=mask)
    else:
        pid = tl.program_id(0)
        if INT64:
            pid = pid.to(tl.int64)
        rows = (pid // tiles_c) * BLOCK_R + tl.arange(0, BLOCK_R)
        ow = (pid % tiles_c) * (BLOCK_C * KW) + tl.arange(0, BLOCK_C * KW)
        wide_mask = (rows < n_rows)[:, None] & (ow < n_cols * KW)[None, :]
        for _ in tl.static_range(LOG_KW):
            v = tl.interleave(v, v)
        for a in tl.static_range(KD):
            for b in tl.static_range(KH):
                tl.store(y_base + a * sy_d + b * sy_h + ow[None, :] * sy_w, v, mask=wide_mask)


@triton.jit
def _blocks_backward_kernel(go_ptr, gi_ptr, C, ID, IH, IW, n_rows, n_cols, tiles_c, s_go_n, s_go_c, s_go_d, s_go_h,
                            s_go_w, s_gi_n, s_gi_c, s_gi_d, s_gi_h, s_gi_w, KD: tl.constexpr, KH: tl.constexpr,
                            KW: tl.constexpr, ACC_T: tl.constexpr, CL: tl.constexpr, INT64: tl.constexpr,
                            BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    """grad_input (N, C, ID, IH, IW) of a nearest resampling by whole factors (KD, KH, KW): each element sums
    the KD x KH x KW block of grad_output that copied it, a gather of loads all in flight at once (in ACC_T,
    from +0.0, in the order of the general kernel's loops)."""
    n, c, d, h, w, mask = image_tile(C, ID, IH, IW, n_rows, n_cols, tiles_c, CL, INT64, BLOCK_R, BLOCK_C)
    go = go_ptr + n * s_go_n + c * s_go_c + d * (KD * s_go_d) + h * (KH * s_go_h) + w * (KW * s_go_w)
    acc = tl.zeros([BLOCK_R, BLOCK_C], ACC_T)
    for a in tl.static_range(KD):
        for b in tl.static_range(KH):
            for e in tl.static_range(KW):
                acc += tl.load(go + a * s_go_d + b * s_go_h + e * s_go_w, mask=mask, other=0).to(ACC_T)
    gi = gi_ptr + n * s_gi_n + c * s_gi_c + d * s_gi_d + h * s_gi_h + w * s_gi_w
    tl.store(gi, acc.to(gi_ptr.dtype.element_ty), mask=mask)


_blocks_forward = Launcher(_blocks_forward_kernel)
_blocks_backward = Launcher(_blocks_backward_kernel)


def blocks_config(rows: int, cols: int, itemsize: int, block: int) -> tuple[int, int, int]:
    """(BLOCK_R, BLOCK_C, num_warps) of _blocks_forward_kernel's input tile, ``block`` outputs per input:
    BLOCKS_OUT_BYTES written per program, up to BLOCKS_WARPS warps with a 16-byte load each or more."""
    elems = max(1, BLOCKS_OUT_BYTES // (itemsize * block))
    block_c = min(next_power_of_2(cols), elems)
    block_r = max(1, min(elems // block_c, next_power_of_2(rows)))
    return block_r, block_c, max(1, min(BLOCKS_WARPS, block_r * block_c * itemsize // 512))


def upsample_blocks(x, y, in_sizes, sx, sy, factors):
    """y = x upsampled by whole factors (see whole_factors): _blocks_forward_kernel, walked over x's tile in
    y's layout."""
    cl, rows, cols = tile_walk(y, in_sizes)
    block_r, block_c, num_warps = blocks_config(rows, cols, y.element_size(), math.prod(factors))
    tiles_c = -(-cols // block_c)
    load_vec = 1 if sx[4] != 1 else max(1, min(16 // y.element_size() // factors[2], block_c))
    _blocks_forward((tiles_c * -(-rows // block_r),), x, y, *in_sizes[1:], rows, cols, tiles_c, *sx, *sy, *factors,
                    factors[2].bit_length() - 1, load_vec, cl, needs_int64(x, y), block_r, block_c,
                    num_warps=num_warps)
    return y


def whole_factors(nearest: bool, in_sizes, out_sizes, axis_scales):
    """The factor per axis (d, h, w) of a nearest (or nearest-exact: ``nearest``) resampling that copies each
    input to a whole block of outputs, or None: factors that are powers of two whose scale is exactly their inverse
    (then floor(o * scale), and floor((o + 0.5) * scale) for nearest-exact, are o // factor while o is exact in
    fp32), few enough taps to unroll."""
    if not nearest or max(out_sizes) > 2**24:
        return None
    factors = [o // i for i, o in zip(in_sizes, out_sizes)]
    for i, o, k, s in zip(in_sizes, out_sizes, factors, axis_scales):
        if o != k * i or k & (k - 1) or s != 1.0 / k:
            return None
    return factors if factors[0] * factors[1] * factors[2] <= _UNROLLED_BLOCK else None


def upsample_blocks_backward(grad_output, grad_input, gi_sizes, s_go, s_gi, factors):
    """grad_input of upsample_blocks for grad_output: _blocks_backward_kernel, walked over grad_input's tile."""
    cl, rows, cols = tile_walk(grad_input, gi_sizes)
    block_r, block_c, tiles_c, num_warps = tile_config(rows, cols, grad_input.element_size(), cl)
    _blocks_backward((tiles_c * -(-rows // block_r),), grad_output, grad_input, gi_sizes[1], *gi_sizes[2:], rows,
                     cols, tiles_c, *s_go, *s_gi, *factors, ACC[grad_input.dtype], cl,
                     needs_int64(grad_output, grad_input), block_r, block_c, num_warps=num_warps)
    return grad_input
