"""pixel_shuffle and pixel_unshuffle between contiguous tensors: r planes of an image interleaved into rows, or back.

Both move data between *planes*, (*, C * r * r, H, W), and *interleaved rows*, (*, C, H * r, W * r): interleaved row
(b, c, h * r + i) holds, at column w * r + j, element (h, w) of plane c * r * r + i * r + j. The family's copy kernel
(remap.py) walks the interleaved side with its innermost dim of r columns, 2-byte accesses r planes apart: 0.69x ATen
for pixel_shuffle of 32 x 64 x 112 x 112 bf16 on an H200. Here a program takes ROWS interleaved rows and BLOCK_W
columns of each of their r planes: the planes' side moves as r contiguous runs of BLOCK_W, the rows' side as one
contiguous run of BLOCK_W * r, and the tile is transposed in registers between them.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from gems.runtime.launch import Launcher, cdiv, next_power_of_2

_TILE = 4096  # elements per program
_INT32_LIMIT = 2**31 - 1


@triton.jit
def _planes_kernel(x_ptr, out_ptr, n_rows, height, width, r, UNSHUFFLE: tl.constexpr, INT64: tl.constexpr,
                   R_P2: tl.constexpr, ROWS: tl.constexpr, BLOCK_W: tl.constexpr):
    """UNSHUFFLE: interleaved rows (x) to planes (out), else planes (x) to interleaved rows (out); ``height`` and
    ``width`` are a plane's, n_rows the interleaved side's rows."""
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        rows = rows.to(tl.int64)
    first_w = tl.program_id(1) * BLOCK_W
    in_rows = rows < n_rows
    image = rows // (height * r)  # (b, c) flattened
    h = rows % (height * r) // r
    i = rows % r
    # the planes' side: [ROWS, R_P2, BLOCK_W], element (h, w) of plane image * r * r + i * r + j
    j3 = tl.arange(0, R_P2)[None, :, None]
    w3 = first_w + tl.arange(0, BLOCK_W)[None, None, :]
    plane = ((image * r * r + i * r)[:, None, None] + j3) * height + h[:, None, None]
    plane_offs = plane * width + w3
    plane_mask = in_rows[:, None, None] & (j3 < r) & (w3 < width)
    # the rows' side: [ROWS, BLOCK_W * R_P2], column w * r + j of each row
    k = tl.arange(0, BLOCK_W * R_P2)
    wk = first_w + k // R_P2
    jk = k % R_P2
    row_offs = (rows * width * r)[:, None] + (wk * r + jk)[None, :]
    row_mask = in_rows[:, None] & ((jk < r) & (wk < width))[None, :]
    if UNSHUFFLE:
        values = tl.load(x_ptr + row_offs, mask=row_mask)
        values = tl.permute(tl.reshape(values, [ROWS, BLOCK_W, R_P2]), (0, 2, 1))
        tl.store(out_ptr + plane_offs, values, mask=plane_mask)
    else:
        values = tl.load(x_ptr + plane_offs, mask=plane_mask)
        values = tl.reshape(tl.permute(values, (0, 2, 1)), [ROWS, BLOCK_W * R_P2])
        tl.store(out_ptr + row_offs, values, mask=row_mask)


_launch = Launcher(_planes_kernel)


def planes_copy(x: torch.Tensor, out: torch.Tensor, r: int, unshuffle: bool) -> torch.Tensor | None:
    """pixel_shuffle (or with ``unshuffle`` pixel_unshuffle) of x into out, both contiguous; None for other
    layouts (the copy kernel serves them)."""
    if not (x.is_contiguous() and out.is_contiguous()) or out.numel() == 0:
        return None
    planes = out if unshuffle else x
    height, width = planes.shape[-2], planes.shape[-1]
    n_rows = planes.numel() // width // r
    src, dst = (x, out) if x.dtype is not torch.bool else (x.view(torch.uint8), out.view(torch.uint8))
    r_p2 = next_power_of_2(r)
    block_w = min(next_power_of_2(width), max(1, _TILE // r_p2))
    rows = max(1, _TILE // (block_w * r_p2))
    _launch((cdiv(n_rows, rows), cdiv(width, block_w)), src, dst, n_rows, height, width, r, unshuffle,
            x.numel() > _INT32_LIMIT, r_p2, rows, block_w, num_warps=4)
    return out
