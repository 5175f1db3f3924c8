"""pixel_unshuffle (and .out): (*, C, H * r, W * r) -> (*, C * r * r, H, W), the inverse of pixel_shuffle:
out[.., c * r * r + i * r + j, h, w] = x[.., c, h * r + i, w * r + j]. Between contiguous tensors one launch of
pixel_planes.py; else one launch of the family's copy kernel over the output viewed as (*, C, r, r, H, W)."""

import torch

from gems.dtypes import ALL
from gems.ops.shape.pixel_planes import planes_copy
from gems.ops.shape.pixel_shuffle import check_factor
from gems.ops.shape.remap import KEEP, MAX_RANK, dense_copy, rank, remap
from gems.ops.shape.shared import empty_suggested, prepared_out, shape_perf, shape_samples
from gems.spec import OpSpec


def _unshuffled_shape(x, r):
    check_factor("pixel_unshuffle", x, r, "downscale_factor")
    *batch, c, h, w = x.shape
    for name, n, dim in (("height", h, -2), ("width", w, -1)):
        if n % r:
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by downscale_factor, but "
                               f"input.size({dim})={n} is not divisible by {r}")
    return [*batch, c * r * r, h // r, w // r]


def _unshuffle(x, out, r):
    if planes_copy(x, out, r, unshuffle=True) is not None:
        return out
    *batch, c, h, w = x.shape
    *xb, xc, xh, xw = x.stride()
    *ob, oc, oh, ow = out.stride()
    dims = [(n, n, sx, so, 0, KEEP) for n, sx, so in zip(batch, xb, ob)]
    dims += [(c, c, xc, r * r * oc, 0, KEEP), (r, r, xh, r * oc, 0, KEEP), (r, r, xw, oc, 0, KEEP),
             (h // r, h // r, r * xh, oh, 0, KEEP), (w // r, w // r, r * xw, ow, 0, KEEP)]
    if rank(dims) > MAX_RANK:  # batch dims that do not merge: copy x dense, then they do
        return _unshuffle(dense_copy(x), out, r)
    return remap(x, out, dims)


def pixel_unshuffle(self, downscale_factor):
    shape = _unshuffled_shape(self, downscale_factor)
    return _unshuffle(self, empty_suggested(self, shape), downscale_factor)


def pixel_unshuffle_out(self, downscale_factor, *, out):
    shape = _unshuffled_shape(self, downscale_factor)
    return _unshuffle(self, prepared_out(out, self, shape), downscale_factor)


SPECS = [
    OpSpec(
        name="pixel_unshuffle", family="tensor",
        impls={"pixel_unshuffle": pixel_unshuffle, "pixel_unshuffle.out": pixel_unshuffle_out},
        call=torch.pixel_unshuffle, samples=shape_samples("pixel_unshuffle_samples"), dtypes=ALL, tolerance="exact",
        perf=shape_perf("pixel-unshuffle", shapes="shape_image")),
]
