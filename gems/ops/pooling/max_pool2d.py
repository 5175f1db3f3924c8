"""max_pool2d: CompositeImplicitAutograd, so gems registers none of it; F.max_pool2d calls
max_pool2d_with_indices and drops the indices. Its samples prove the gems kernels it reaches ran, forward and
backward; its perf inputs time the call models make (the max_pool2d_with_indices kernel, indices written)."""

import torch

from gems.dtypes import FLOATS
from gems.ops.pooling.shared import pooling_perf, pooling_samples
from gems.spec import OpSpec

SPECS = [
    OpSpec(name="max_pool2d", family="pooling", impls={},
           composite_of=("max_pool2d_with_indices", "max_pool2d_with_indices_backward"),
           call=torch.nn.functional.max_pool2d, dtypes=FLOATS,
           samples=pooling_samples("composite_samples", "max_pool2d"), perf=pooling_perf("max_pool2d", "pool_max")),
]
