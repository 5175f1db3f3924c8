"""ones_like: full_like (full_like.py) with 1; the input's layout is kept, its values ignored."""

import torch

from gems.dtypes import ALL
from gems.ops.creation.fill import like_samples
from gems.ops.creation.full_like import full_like
from gems.spec import OpSpec


def ones_like(self, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return full_like(self, 1, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory,
                     memory_format=memory_format)


SPECS = [
    OpSpec(
        name="ones_like", family="creation", impls={"ones_like": ones_like}, call=torch.ones_like,
        samples=like_samples(torch.ones_like, "ones_like"), dtypes=ALL, tolerance="exact",
    ),
]
