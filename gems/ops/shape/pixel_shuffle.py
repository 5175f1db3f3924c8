"""pixel_shuffle (and .out): (*, C * r * r, H, W) -> (*, C, H * r, W * r), out[.., c, h * r + i, w * r + j] =
x[.., c * r * r + i * r + j, h, w]. A permutation: between contiguous tensors one launch of pixel_planes.py (planes
read in runs, transposed in registers, rows written in runs); else one launch of the family's copy kernel over the
output viewed as (*, C, H, r, W, r), each dim reading x through its own stride (batch dims merge where they can; the
rows of the output's last dim are its columns). pixel_unshuffle is its inverse and shares the checks.
"""

import torch

from gems.dtypes import ALL
from gems.ops.shape.pixel_planes import planes_copy
from gems.ops.shape.remap import KEEP, MAX_RANK, dense_copy, rank, remap
from gems.ops.shape.shared import checked_dtype, empty_suggested, prepared_out, shape_perf, shape_samples
from gems.spec import OpSpec


def check_factor(name, x, factor, noun):
    if x.dim() < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input with {x.dim()} "
                           f"dimension(s)")
    if factor <= 0:
        raise RuntimeError(f"{name} expects a positive {noun}, but got {factor}")
    checked_dtype(x)


def _shuffled_shape(x, r):
    check_factor("pixel_shuffle", x, r, "upscale_factor")
    *batch, c, h, w = x.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    return [*batch, c // (r * r), h * r, w * r]


def _shuffle(x, out, r):
    if planes_copy(x, out, r, unshuffle=False) is not None:
        return out
    *batch, c, h, w = out.shape
    *xb, xc, xh, xw = x.stride()
    *ob, oc, oh, ow = out.stride()
    dims = [(n, n, sx, so, 0, KEEP) for n, sx, so in zip(batch, xb, ob)]
    dims += [(c, c, r * r * xc, oc, 0, KEEP), (h // r, h // r, xh, r * oh, 0, KEEP), (r, r, r * xc, oh, 0, KEEP),
             (w // r, w // r, xw, r * ow, 0, KEEP), (r, r, xc, ow, 0, KEEP)]
    if rank(dims) > MAX_RANK:  # batch dims that do not merge: copy x dense, then they do
        return _shuffle(dense_copy(x), out, r)
    return remap(x, out, dims)


def pixel_shuffle(self, upscale_factor):
    shape = _shuffled_shape(self, upscale_factor)
    return _shuffle(self, empty_suggested(self, shape), upscale_factor)


def pixel_shuffle_out(self, upscale_factor, *, out):
    shape = _shuffled_shape(self, upscale_factor)
    return _shuffle(self, prepared_out(out, self, shape), upscale_factor)


SPECS = [
    OpSpec(
        name="pixel_shuffle", family="tensor",
        impls={"pixel_shuffle": pixel_shuffle, "pixel_shuffle.out": pixel_shuffle_out},
        call=torch.pixel_shuffle, samples=shape_samples("pixel_shuffle_samples"), dtypes=ALL, tolerance="exact",
        perf=shape_perf("pixel-shuffle", shapes="shape_image")),
]
