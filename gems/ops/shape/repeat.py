"""repeat (and repeat.out): x tiled ``repeats`` times along each dim (x's shape padded with leading 1s to
len(repeats) dims); out[o] = x[o mod n] per dim. One launch, the result contiguous as ATen's: _repeat_kernel,
which loads each tile of x once and stores it to up to COPIES_PER_PROGRAM of its copies, where x's dims and
the repeated ones fit it; else the family's copy kernel walking out (remap.py). tile is
CompositeImplicitAutograd in ATen: it calls repeat.
"""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import pointwise_config
from gems.dtypes import ALL
from gems.ops.shape.remap import INT32_LIMIT, KEEP, MAX_RANK, WRAP, rank, remap
from gems.ops.shape.shared import checked_dtype, prepared_out, shape_perf, shape_samples
from gems.runtime.launch import Launcher, cdiv, next_power_of_2
from gems.spec import OpSpec

# Copies one program stores per tile of x it loads. Walking out instead (remap), each copy loads its tile again
# (from L2 after the first): 2 KB of L2 reads per 2 KB written, where a copy moves 1 per 1 (repeat (2, 2) of
# 4096 x 4096 fp16 on an H200 reached 87% of a copy's bandwidth so).
COPIES_PER_PROGRAM = 8
_MAX_GROUPS = 65535  # a grid's second dim


@triton.jit
def _repeat_kernel(x_ptr, out_ptr, n_rows, n_cols, tiles_c, n_copies, per_program,
                   m0, sx0, so0, m1, sx1, so1, m2, sx2, so2, sx3, so3, r0, step0, r1, step1, r2, step2, r3, step3,
                   INT64: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    """Program (t, g): tile t of x (rows: dims 0-2, row-major; columns: dim 3) stored to copies g * per_program
    onwards (copy k: its digits in radices r0..r3, dim 3 last, each adding digit * step to out's offsets)."""
    pid = tl.program_id(0)
    group = tl.program_id(1)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        pid = pid.to(tl.int64)
        group = group.to(tl.int64)
    rows = (pid // tiles_c) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = (pid % tiles_c) * BLOCK_C + tl.arange(0, BLOCK_C)
    o2 = rows % m2
    o1 = (rows // m2) % m1
    o0 = rows // m2 // m1
    off_x = o0 * sx0 + o1 * sx1 + o2 * sx2
    off_o = o0 * so0 + o1 * so1 + o2 * so2
    mask = (rows < n_rows)[:, None] & (cols < n_cols)[None, :]
    x = tl.load(x_ptr + off_x[:, None] + (cols * sx3)[None, :], mask=mask)
    out_ptrs = out_ptr + off_o[:, None] + (cols * so3)[None, :]
    first = group * per_program
    for k in range(first, tl.minimum(first + per_program, n_copies)):
        c = k
        off = (c % r3) * step3
        c = c // r3
        off += (c % r2) * step2
        c = c // r2
        off += (c % r1) * step1
        off += (c // r1) * step0
        tl.store(out_ptrs + off, x, mask=mask)


_repeat = Launcher(_repeat_kernel)


def _repeated_shape(x, repeats):
    if len(repeats) < x.dim():
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")
    lead = len(repeats) - x.dim()
    sizes = (1,) * lead + tuple(x.shape)
    strides = (0,) * lead + tuple(x.stride())
    shape = [n * r for n, r in zip(sizes, repeats)]
    negative = next((m for m in shape if m < 0), None)
    if negative is not None:
        raise RuntimeError(f"Trying to create tensor with negative dimension {negative}: {shape}")
    return shape, sizes, strides


def _pieces_and_copies(out, sizes, strides):
    """(x's dims as (size, x stride, out stride), merged where contiguous in both, 4 of them; the repeated dims as
    (copies, out offset per copy), 4 of them), or None where more remain than _repeat_kernel takes."""
    pieces, copies = [], []
    for m, n, sx, so in zip(out.shape, sizes, strides, out.stride()):
        if m // n > 1:
            copies.append((m // n, n * so))
        if n == 1:
            continue
        if pieces and pieces[-1][1] == sx * n and pieces[-1][2] == so * n:
            pieces[-1] = (pieces[-1][0] * n, sx, so)
        else:
            pieces.append((n, sx, so))
    if len(pieces) > 4 or len(copies) > 4:
        return None
    return [(1, 0, 0)] * (4 - len(pieces)) + pieces, [(1, 0)] * (4 - len(copies)) + copies


def _repeat_tiles(x, out, pieces, copies):
    """out = x repeated, by _repeat_kernel: tiles of x as the vendor's pointwise rule sizes them for x."""
    n_cols, sx3, so3 = pieces[3]
    n_rows = pieces[0][0] * pieces[1][0] * pieces[2][0]
    n_copies = out.numel() // x.numel()
    per_program = max(min(COPIES_PER_PROGRAM, n_copies), cdiv(n_copies, _MAX_GROUPS))
    block, num_warps = pointwise_config(x.numel(), x.element_size())
    block_c = min(next_power_of_2(n_cols), block)
    block_r = min(max(1, block // block_c), next_power_of_2(n_rows))
    tiles_c = cdiv(n_cols, block_c)
    reach = max(sum((n - 1) * abs(sx) for n, sx, _ in pieces), sum((m - 1) * so for m, so in zip(out.shape,
                                                                                                   out.stride())))
    _repeat((cdiv(n_rows, block_r) * tiles_c, cdiv(n_copies, per_program)), x, out, n_rows, n_cols, tiles_c,
            n_copies, per_program, *(v for n, sx, so in pieces[:3] for v in (n, sx, so)), sx3, so3,
            *(v for copy in copies for v in copy), out.numel() > INT32_LIMIT or reach > INT32_LIMIT, block_r, block_c,
            num_warps=num_warps)
    return out


def _repeat_into(x, out, sizes, strides):
    if out.numel() == 0:
        return out
    split = _pieces_and_copies(out, sizes, strides)
    if split is not None:
        return _repeat_tiles(x, out, *split)
    return _walk_out(x, out, sizes, strides)


def _walk_out(x, out, sizes, strides):
    """Each out dim of size r * n is walked as two, (r, n), the first reading x with stride 0: the last dim's
    loads stay contiguous (vectorized). The copies (r) are walked inside the pieces (n) of the dims before the
    last repeated one, so that the programs writing the copies of one piece of x run one after another and read
    it from the cache, not from memory again (the walk's order need not be out's: each dim has its own stride);
    the pieces from the last repeated dim on stay together (merged into long rows where x is contiguous).
    Where that makes more dims than the kernel walks, WRAP mode (o mod n) keeps one dim per out dim."""
    pieces, copies = [], []
    for m, n, sx, so in zip(out.shape, sizes, strides, out.stride()):
        r = m // n if n else 1
        copies.append((r, r, 0, n * so, 0, KEEP))
        pieces.append((n, n, sx, so, 0, KEEP))
    last = max((d for d, copy in enumerate(copies) if copy[0] != 1), default=0)
    split = pieces[:last] + copies[:last + 1] + pieces[last:]
    if rank(split) <= MAX_RANK:
        return remap(x, out, split)
    return remap(x, out, [(m, n, sx, so, 0, KEEP if m == n else WRAP)
                          for m, n, sx, so in zip(out.shape, sizes, strides, out.stride())])


def repeat(self, repeats):
    shape, sizes, strides = _repeated_shape(self, repeats)
    checked_dtype(self)
    out = torch.empty(shape, dtype=self.dtype, device=self.device)
    return _repeat_into(self, out, sizes, strides)


def repeat_out(self, repeats, *, out):
    shape, sizes, strides = _repeated_shape(self, repeats)
    checked_dtype(self)
    prepared_out(out, self, shape)
    return _repeat_into(self, out, sizes, strides)


SPECS = [
    OpSpec(
        name="repeat", family="tensor", impls={"repeat": repeat, "repeat.out": repeat_out}, call=torch.Tensor.repeat,
        samples=shape_samples("repeat_samples"), dtypes=ALL, tolerance="pointwise", perf=shape_perf("repeat")),
]
