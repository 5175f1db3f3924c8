"""repeat (and repeat.out): x tiled ``repeats`` times along each dim (x's shape padded with leading 1s to
len(repeats) dims); out[o] = x[o mod n] per dim. One launch, the result contiguous as ATen's. tile is
CompositeImplicitAutograd in ATen: it calls repeat.

Where x's innermost run is long (at least MIN_RUN_BYTES) and contiguous in out, each program loads one tile of
x and stores it at up to COPIES_PER_PROGRAM of its copies (_repeat_kernel): the SMs read x once and write out
once. Walking out instead (the family's copy kernel: each out tile loads its x tile) reads each piece of x once
per copy, from the L2 cache where the copies' programs run close together, but through it all the same: for
repeat(2, 2) of 4096 x 4096, 2 bytes pass between the SMs and the L2 per 1.25 bytes of DRAM traffic (1.6x),
where a copy passes 1 per 1, on GPUs whose L2 bandwidth is not twice their DRAM's (H100, H200). Short runs
(a tile of x would be a few bytes per row and copy) keep the walk over out.
"""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import pointwise_config
from gems.dtypes import ALL
from gems.ops.indexing.shared import plan_walk
from gems.ops.shape.remap import INT32_LIMIT, KEEP, MAX_RANK, WRAP, rank, remap
from gems.ops.shape.shared import checked_dtype, prepared_out, shape_perf, shape_samples
from gems.runtime.launch import Launcher, cdiv, next_power_of_2
from gems.runtime.registration import Fallback
from gems.spec import OpSpec

# Copies one program stores from its tile of x: x's reads fall to 1 per 8 stores at most; more copies are
# spread over more programs (tiles x cdiv(copies, 8)), so that a small x repeated many times still fills the GPU.
COPIES_PER_PROGRAM = 8
# x's innermost run (after merging) below which out is walked instead: a warp's 32 16-byte vectors. Shorter
# runs would make each copy's store a few bytes per row of the tile, spread over out.
MIN_RUN_BYTES = 512

# --------------------------------------------------------------------------- kernels


@triton.jit
def _repeat_kernel(x_ptr, out_ptr, n_rows, n_cols, tiles_c, size1, size2,
                   stride_x0, stride_x1, stride_x2, stride_x3, stride_o0, stride_o1, stride_o2, stride_o3,
                   chunks, n_copies, r1, r2, r3, stride_c0, stride_c1, stride_c2, stride_c3,
                   INT64: tl.constexpr, COPIES: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    """x walked as n_rows rows (dims of size n_rows / (size1 * size2), size1, size2) by n_cols columns, with its
    strides and out's (the copy at offset 0); copy c of the n_copies (row-major over r0 x r1 x r2 x r3) sits at
    out offset sum_d c_d * stride_c_d. Program pid loads tile pid // chunks of x once and stores it at copies
    (pid % chunks) * COPIES ... + COPIES - 1."""
    pid = tl.program_id(0)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        pid = pid.to(tl.int64)
    tile = pid // chunks
    first = (pid % chunks) * COPIES
    rows = (tile // tiles_c) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = (tile % tiles_c) * BLOCK_C + tl.arange(0, BLOCK_C)
    i2 = rows % size2
    rest = rows // size2
    i1 = rest % size1
    i0 = rest // size1
    mask = (rows < n_rows)[:, None] & (cols < n_cols)[None, :]
    off_x = (i0 * stride_x0 + i1 * stride_x1 + i2 * stride_x2)[:, None] + (cols * stride_x3)[None, :]
    x = tl.load(x_ptr + off_x, mask=mask)
    out_ptrs = out_ptr + (i0 * stride_o0 + i1 * stride_o1 + i2 * stride_o2)[:, None] + (cols * stride_o3)[None, :]
    for k in range(COPIES):
        c = first + k
        # A branch, not a mask: triton 3.9's interpreter gives a bool tile & a bool scalar an int32 result,
        # which tl.store refuses as a mask.
        if c < n_copies:
            q = c // r3
            p = q // r2
            delta = (p // r1) * stride_c0 + (p % r1) * stride_c1 + (q % r2) * stride_c2 + (c % r3) * stride_c3
            tl.store(out_ptrs + delta, x, mask=mask)


_repeat = Launcher(_repeat_kernel)

# --------------------------------------------------------------------------- launchers


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


def _copy_tiles(x, out, sizes, strides) -> bool:
    """out = x tiled, by _repeat_kernel; False (nothing launched) where out is better walked: x's innermost
    run short or not contiguous in out (x of shape (n, 1) repeated along dim 1: out's runs are the copies), or
    more pieces or copies than the kernel walks."""
    try:  # x's pieces (with x's strides and out's) and the copies (with out's), each merged into up to 4 dims
        pieces = plan_walk(sizes, strides, out.stride())
        copies = plan_walk([m // n for m, n in zip(out.shape, sizes)], [n * so for n, so in zip(sizes, out.stride())])
    except Fallback:
        return False
    (stride_x, stride_o), (stride_c,) = pieces.strides, copies.strides
    if stride_o[3] != 1 or pieces.n_cols * x.element_size() < MIN_RUN_BYTES:
        return False
    n_copies = copies.n_rows * copies.n_cols
    block, num_warps = pointwise_config(x.numel(), x.element_size())
    block_c = min(next_power_of_2(pieces.n_cols), block)
    block_r = min(max(1, block // block_c), next_power_of_2(pieces.n_rows))
    tiles_c = cdiv(pieces.n_cols, block_c)
    per_program = min(n_copies, COPIES_PER_PROGRAM)
    chunks = cdiv(n_copies, per_program)
    # Offsets a program computes, masked lanes included (a tile's columns run up to tiles_c * block_c).
    sizes_x = (pieces.n_rows // (pieces.size1 * pieces.size2), pieces.size1, pieces.size2, tiles_c * block_c)
    sizes_c = (copies.n_rows // (copies.size1 * copies.size2), copies.size1, copies.size2, copies.n_cols)
    reach_x = sum(n * abs(st) for n, st in zip(sizes_x, stride_x))
    reach_o = sum(n * abs(st) for n, st in zip(sizes_x, stride_o))
    reach_o += sum(r * abs(st) for r, st in zip(sizes_c, stride_c))
    _repeat((cdiv(pieces.n_rows, block_r) * tiles_c * chunks,), x, out, pieces.n_rows, pieces.n_cols, tiles_c,
            pieces.size1, pieces.size2, *stride_x, *stride_o, chunks, n_copies, *sizes_c[1:], *stride_c,
            max(reach_x, reach_o) > INT32_LIMIT, per_program, block_r, block_c, num_warps=num_warps)
    return True


def _repeat_into(x, out, sizes, strides):
    if out.numel() == 0 or _copy_tiles(x, out, sizes, strides):
        return out
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


# --------------------------------------------------------------------------- ATen overloads


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
