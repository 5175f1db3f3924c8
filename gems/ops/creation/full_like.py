"""full_like: the input's layout (memory_format rules of torch.empty_like) filled with ``fill_value``."""

import torch

from gems.checks import checked_scalar
from gems.dtypes import ALL
from gems.ops.creation.fill import check_options, fill_dense, like_samples
from gems.spec import OpSpec


def full_like(self, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    dtype = self.dtype if dtype is None else dtype
    check_options(dtype, layout, device if device is not None else self.device, pin_memory)
    value = checked_scalar(fill_value, dtype)
    out = torch.empty_like(self, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory,
                           memory_format=memory_format)
    return fill_dense(out, value)


SPECS = [
    OpSpec(
        name="full_like", family="creation", impls={"full_like": full_like}, call=torch.full_like,
        samples=like_samples(torch.full_like, "full_like", (2,), fill_checks=(
            ("float-value", -1.25), ("overflow", 1e40), ("bool-value", True))),
        dtypes=ALL, tolerance="exact",
    ),
]
