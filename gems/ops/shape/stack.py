"""stack (and stack.out): CompositeExplicitAutograd in ATen, whose kernel checks the shapes, then calls cat
(cat along dim of the inputs, viewed with the new dim split out; cat of the unsqueezed inputs when dim is the
last): gems serves it through cat and cat.out, one launch, and its samples prove they ran."""

import torch

from gems.dtypes import ALL
from gems.ops.shape.shared import shape_samples
from gems.spec import OpSpec

SPECS = [
    OpSpec(
        name="stack", family="tensor", impls={}, composite_of=("cat", "cat.out"), call=torch.stack,
        samples=shape_samples("stack_samples"), dtypes=ALL, tolerance="exact"),
]
