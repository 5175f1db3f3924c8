"""randn_like (randn_like, .generator, .out, .generator_out): the input's layout drawn from N(0, 1) by
normal_ (normal_.py); the input's values are not read."""

import torch
import triton.language as tl  # noqa: F401 (the interpreter runs a module's kernels only when tl is in it)

from gems.dtypes import FLOATS
from gems.ops.random.normal_ import normal_
from gems.ops.random.philox import SEED_DRAW, like_overloads, random_samples
from gems.spec import OpSpec

SPECS = [
    OpSpec(
        name="randn_like", family="random", impls=like_overloads("randn_like", normal_), call=torch.randn_like,
        samples=random_samples("like_samples", "randn_like", "normal"), dtypes=FLOATS,
        aten_decisions=SEED_DRAW,
    ),
]
