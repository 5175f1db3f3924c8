"""select_scatter (and .out): a copy of self whose ``select(dim, index)`` is src (converted to self's dtype). Two
launches of the family's copy kernel, as slice_scatter's (whose helper it uses), into ATen's own select view."""

import torch

from gems.dtypes import ALL
from gems.ops.shape.shared import prepared_out, shape_samples
from gems.ops.shape.slice_scatter import scatter_into
from gems.spec import OpSpec


def select_scatter(self, src, dim, index):
    out = torch.empty_like(self)
    return scatter_into(out, self, src, out.select(dim, index))


def select_scatter_out(self, src, dim, index, *, out):
    self.select(dim, index)  # ATen's errors for the index, before out is touched
    prepared_out(out, self, self.shape, src)
    return scatter_into(out, self, src, out.select(dim, index))


SPECS = [
    OpSpec(
        name="select_scatter", family="tensor",
        impls={"select_scatter": select_scatter, "select_scatter.out": select_scatter_out},
        call=torch.select_scatter, samples=shape_samples("select_scatter_samples"), dtypes=ALL, tolerance="exact"),
]
