"""zeros_like: full_like (full_like.py) with 0; the input's layout is kept, its values ignored."""

import torch

from gems.dtypes import ALL
from gems.ops.creation.fill import like_samples
from gems.ops.creation.full_like import full_like
from gems.spec import OpSpec


def zeros_like(self, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return full_like(self, 0, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory,
                     memory_format=memory_format)


SPECS = [
    OpSpec(
        name="zeros_like", family="creation", impls={"zeros_like": zeros_like}, call=torch.zeros_like,
        samples=like_samples(torch.zeros_like, "zeros_like"), dtypes=ALL, tolerance="exact",
    ),
]
