"""max_pool1d: CompositeImplicitAutograd, so gems registers none of it; (N, C, L) or (C, L): max_pool2d_with_indices
over an added unit height (max_pool1d_with_indices too). Its samples prove the gems kernels it reaches ran, forward
and backward."""

import torch

from gems.dtypes import FLOATS
from gems.ops.pooling.shared import pooling_samples
from gems.spec import OpSpec

SPECS = [
    OpSpec(name="max_pool1d", family="pooling", impls={},
           composite_of=("max_pool2d_with_indices", "max_pool2d_with_indices_backward"),
           call=torch.nn.functional.max_pool1d, dtypes=FLOATS,
           samples=pooling_samples("composite_samples", "max_pool1d")),
]
