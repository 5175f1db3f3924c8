"""slice_scatter (and .out): a copy of self whose slice ``[start:end:step]`` along dim is src (converted to self's
dtype, as ATen's copy_ converts it). Two launches of the family's copy kernel, as ATen's clone-then-copy: self
into the result (keeping its layout), then src into the slice of the result. The slice is ATen's own view
(aten::slice), so its bounds, and the size check against src, are ATen's before anything launches.
"""

import torch

from gems.dtypes import ALL
from gems.ops.shape.remap import dims_of, remap
from gems.ops.shape.shared import checked_dtype, prepared_out, shape_samples
from gems.spec import OpSpec


def scatter_into(out, self, src, view):
    """out = self, then ``view`` (a view of out) = src; after the checks of the view's shape."""
    if view.shape != src.shape:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                           f"slice size = {list(view.shape)}")
    checked_dtype(self, src)
    remap(self, out, dims_of(self, out))
    remap(src, view, dims_of(src, view))
    return out


def _slice(t, dim, start, end, step):
    return torch.ops.aten.slice.Tensor(t, dim, start, end, step)


def slice_scatter(self, src, dim=0, start=None, end=None, step=1):
    out = torch.empty_like(self)
    return scatter_into(out, self, src, _slice(out, dim, start, end, step))


def slice_scatter_out(self, src, dim=0, start=None, end=None, step=1, *, out):
    _slice(self, dim, start, end, step)  # ATen's errors for the slice, before out is touched
    prepared_out(out, self, self.shape, src)
    return scatter_into(out, self, src, _slice(out, dim, start, end, step))


SPECS = [
    OpSpec(
        name="slice_scatter", family="tensor",
        impls={"slice_scatter": slice_scatter, "slice_scatter.out": slice_scatter_out},
        call=torch.slice_scatter, samples=shape_samples("slice_scatter_samples"), dtypes=ALL, tolerance="exact"),
]
