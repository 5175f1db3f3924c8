"""gather_backward: the gradient of gather, ``zeros(self.shape).scatter_add(dim, index, grad)``. ATen's
gather_backward is CompositeImplicitAutograd, so gems registers nothing for it: its calls decompose into
scatter_add (scatter_add.py), whose kernel proves gems ran."""

from __future__ import annotations

import torch

from gems.dtypes import FLOATS
from gems.spec import OpSpec


def _samples(dtype, device, quick):
    from gems.testing.samples_indexing import gather_backward_samples

    return gather_backward_samples(dtype, device, quick)


SPECS = [
    OpSpec(
        name="gather_backward", family="indexing", impls={}, composite_of=("scatter_add",),
        call=torch.ops.aten.gather_backward, samples=_samples, dtypes=FLOATS,
        varies_between_runs={"*": "equal indices add in the order their atomics land (as in ATen's CUDA kernel)"},
    ),
]
