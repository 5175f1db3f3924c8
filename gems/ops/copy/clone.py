"""clone (and clone.out): a new tensor with ``self``'s values. memory_format=preserve (the default) keeps a dense
input's strides and gives a non-dense one dense strides in the same order; contiguous_format and
channels_last(_3d) are asked of torch.empty (a transposed input is then transposed by the tiled copy kernel).
clone.out wants out of self's dtype; an out that shares memory with self is written from a temporary copy, as
ATen's clone-then-copy does."""

import torch

from gems.dtypes import ALL
from gems.ops.copy.shared import allocate_like, check_dtypes, copy_out, copy_perf, copy_samples, launch_copy
from gems.spec import OpSpec


def clone(self, *, memory_format=None):
    check_dtypes(self)
    return launch_copy(allocate_like(self, self.dtype, memory_format), self)


def clone_out(self, *, memory_format=None, out):
    return copy_out(out, self)


SPECS = [
    OpSpec(
        name="clone", family="creation", impls={"clone": clone, "clone.out": clone_out}, call=torch.clone,
        samples=copy_samples("clone_samples"), dtypes=ALL, tolerance="exact", perf=copy_perf("clone_perf"),
    ),
]
