"""tile: CompositeImplicitAutograd in ATen, which pads ``dims`` with leading 1s to x's rank and calls
repeat: gems serves it through repeat (its samples prove repeat ran)."""

import torch

from gems.dtypes import ALL
from gems.ops.shape.shared import shape_samples
from gems.spec import OpSpec

SPECS = [
    OpSpec(
        name="tile", family="tensor", impls={}, composite_of=("repeat",), call=torch.tile,
        samples=shape_samples("tile_samples"), dtypes=ALL, tolerance="pointwise"),
]
