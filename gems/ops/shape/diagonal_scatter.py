"""diagonal_scatter (and .out): a copy of self whose ``diagonal(offset, dim1, dim2)`` is src (converted to self's
dtype). Two launches of the family's copy kernel, as slice_scatter's (whose helper it uses), into ATen's own
diagonal view (a strided view: stride dim1 + stride dim2 along the diagonal)."""

import torch

from gems.dtypes import ALL
from gems.ops.shape.shared import prepared_out, shape_samples
from gems.ops.shape.slice_scatter import scatter_into
from gems.spec import OpSpec


def diagonal_scatter(self, src, offset=0, dim1=0, dim2=1):
    out = torch.empty_like(self)
    return scatter_into(out, self, src, out.diagonal(offset, dim1, dim2))


def diagonal_scatter_out(self, src, offset=0, dim1=0, dim2=1, *, out):
    self.diagonal(offset, dim1, dim2)  # ATen's errors for the dims, before out is touched
    prepared_out(out, self, self.shape, src)
    return scatter_into(out, self, src, out.diagonal(offset, dim1, dim2))


SPECS = [
    OpSpec(
        name="diagonal_scatter", family="tensor",
        impls={"diagonal_scatter": diagonal_scatter, "diagonal_scatter.out": diagonal_scatter_out},
        call=torch.diagonal_scatter, samples=shape_samples("diagonal_scatter_samples"), dtypes=ALL,
        tolerance="exact"),
]
