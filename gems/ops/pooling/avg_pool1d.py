"""avg_pool1d: CompositeImplicitAutograd, so gems registers none of it; (N, C, L) or (C, L): avg_pool2d over an added
unit height. Its samples prove the gems kernels it reaches ran, forward and backward."""

import torch

from gems.dtypes import FLOATS
from gems.ops.pooling.shared import pooling_samples
from gems.spec import OpSpec

SPECS = [
    OpSpec(name="avg_pool1d", family="pooling", impls={},
           composite_of=("avg_pool2d", "avg_pool2d_backward"),
           call=torch.nn.functional.avg_pool1d, dtypes=FLOATS,
           samples=pooling_samples("composite_samples", "avg_pool1d")),
]
