"""repeat (and repeat.out): x tiled ``repeats`` times along each dim (x's shape padded with leading 1s to
len(repeats) dims); out[o] = x[o mod n] per dim. One launch of the family's copy kernel, the result contiguous
as ATen's. tile is CompositeImplicitAutograd in ATen: it calls repeat.
"""

import torch

from gems.dtypes import ALL
from gems.ops.shape.remap import KEEP, MAX_RANK, WRAP, rank, remap
from gems.ops.shape.shared import checked_dtype, prepared_out, shape_perf, shape_samples
from gems.spec import OpSpec


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


def _repeat_into(x, out, sizes, strides):
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
