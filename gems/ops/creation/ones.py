"""ones (and ones.out): the fill kernel of fill.py with 1."""

import torch

from gems.dtypes import ALL
from gems.ops.creation.fill import sized_factory_perf, sized_factory_samples
from gems.ops.creation.full import full, full_out
from gems.spec import OpSpec


def ones(size, *, dtype=None, layout=None, device=None, pin_memory=None):
    return full(size, 1, dtype=dtype or torch.get_default_dtype(), layout=layout, device=device,
                pin_memory=pin_memory)


def ones_out(size, *, out):
    return full_out(size, 1, out=out)


SPECS = [
    OpSpec(
        name="ones", family="creation", impls={"ones": ones, "ones.out": ones_out}, call=torch.ones,
        samples=sized_factory_samples(torch.ones, "ones"), dtypes=ALL, tolerance="exact",
        perf=sized_factory_perf(torch.ones),
    ),
]
