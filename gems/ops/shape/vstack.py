"""vstack (and vstack.out): CompositeImplicitAutograd in ATen (atleast_2d views, then cat along dim 0): gems
serves it through cat and cat.out, and its samples prove they ran."""

import torch

from gems.dtypes import ALL
from gems.ops.shape.shared import shape_samples
from gems.spec import OpSpec

SPECS = [
    OpSpec(
        name="vstack", family="tensor", impls={}, composite_of=("cat", "cat.out"), call=torch.vstack,
        samples=shape_samples("vstack_samples"), dtypes=ALL, tolerance="exact"),
]
