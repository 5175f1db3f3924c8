"""new_zeros (and new_zeros.out): new_full (new_full.py) with 0."""

import torch

from gems.dtypes import ALL
from gems.ops.creation.fill import factory_perf
from gems.ops.creation.new_full import new_factory_samples, new_full, new_full_out
from gems.spec import OpSpec


def new_zeros(self, size, *, dtype=None, layout=None, device=None, pin_memory=None):
    return new_full(self, size, 0, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)


def new_zeros_out(self, size, *, out):
    return new_full_out(self, size, 0, out=out)


SPECS = [
    OpSpec(
        name="new_zeros", family="creation", impls={"new_zeros": new_zeros, "new_zeros.out": new_zeros_out},
        call=torch.Tensor.new_zeros, samples=new_factory_samples("new_zeros", "new_zeros"), dtypes=ALL,
        tolerance="exact", perf=factory_perf(lambda like, shape: like.new_zeros(shape)),
    ),
]
