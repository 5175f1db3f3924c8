"""zeros (and zeros.out): the fill kernel of fill.py with 0."""

import torch

from gems.dtypes import ALL
from gems.ops.creation.fill import sized_factory_perf, sized_factory_samples
from gems.ops.creation.full import full, full_out
from gems.spec import OpSpec


def zeros(size, *, dtype=None, layout=None, device=None, pin_memory=None):
    return full(size, 0, dtype=dtype or torch.get_default_dtype(), layout=layout, device=device,
                pin_memory=pin_memory)


def zeros_out(size, *, out):
    return full_out(size, 0, out=out)


SPECS = [
    OpSpec(
        name="zeros", family="creation", impls={"zeros": zeros, "zeros.out": zeros_out}, call=torch.zeros,
        samples=sized_factory_samples(torch.zeros, "zeros"), dtypes=ALL, tolerance="exact",
        perf=sized_factory_perf(torch.zeros),
    ),
]
