"""flip (and flip.out): the order of elements reversed along ``dims``; out[..., o, ...] = x[..., n - 1 - o, ...].

One launch of the family's copy kernel (FLIP along the flipped dims, KEEP elsewhere); the result keeps x's
layout (ATen's empty_like), so a transposed input is walked in memory order.
"""

import torch

from gems.dtypes import ALL
from gems.ops.shape.remap import FLIP, dims_of, remap
from gems.ops.shape.shared import checked_dtype, prepared_out, shape_perf, shape_samples, wrap_dim
from gems.spec import OpSpec


def _flipped_dims(x, dims) -> dict:
    wrapped = [wrap_dim(d, x.dim()) for d in dims]
    for i, d in enumerate(wrapped):
        if d in wrapped[:i]:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return {d: (FLIP, 0) for d in wrapped if x.dim()}  # a 0-d tensor takes dim 0 and -1: nothing to flip


def flip(self, dims):
    modes = _flipped_dims(self, dims)
    checked_dtype(self)
    out = torch.empty_like(self)
    return remap(self, out, dims_of(self, out, modes))


def flip_out(self, dims, *, out):
    modes = _flipped_dims(self, dims)
    checked_dtype(self)
    prepared_out(out, self, self.shape)
    return remap(self, out, dims_of(self, out, modes))


SPECS = [
    OpSpec(
        name="flip", family="tensor", impls={"flip": flip, "flip.out": flip_out}, call=torch.flip,
        samples=shape_samples("flip_samples"), dtypes=ALL, tolerance="exact", perf=shape_perf("flip")),
]
