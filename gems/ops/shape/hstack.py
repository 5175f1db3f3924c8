"""hstack (and hstack.out): CompositeImplicitAutograd in ATen (atleast_1d views, then cat along dim 1, or
dim 0 for 1-d inputs): gems serves it through cat and cat.out, and its samples prove they ran."""

import torch

from gems.dtypes import ALL
from gems.ops.shape.shared import shape_samples
from gems.spec import OpSpec

SPECS = [
    OpSpec(
        name="hstack", family="tensor", impls={}, composite_of=("cat", "cat.out"), call=torch.hstack,
        samples=shape_samples("hstack_samples"), dtypes=ALL, tolerance="exact"),
]
