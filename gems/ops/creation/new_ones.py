"""new_ones (and new_ones.out): new_full (new_full.py) with 1."""

import torch

from gems.dtypes import ALL
from gems.ops.creation.fill import factory_perf
from gems.ops.creation.new_full import new_factory_samples, new_full, new_full_out
from gems.spec import OpSpec


def new_ones(self, size, *, dtype=None, layout=None, device=None, pin_memory=None):
    return new_full(self, size, 1, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)


def new_ones_out(self, size, *, out):
    return new_full_out(self, size, 1, out=out)


SPECS = [
    OpSpec(
        name="new_ones", family="creation", impls={"new_ones": new_ones, "new_ones.out": new_ones_out},
        call=torch.Tensor.new_ones, samples=new_factory_samples("new_ones", "new_ones"), dtypes=ALL,
        tolerance="exact", perf=factory_perf(lambda like, shape: like.new_ones(shape)),
    ),
]
