"""rand_like (rand_like, .generator, .out, .generator_out): the input's layout drawn from U[0, 1) by
uniform_ (uniform_.py); the input's values are not read."""

import torch
import triton.language as tl  # noqa: F401 (the interpreter runs a module's kernels only when tl is in it)

from gems.dtypes import FLOATS
from gems.ops.random.philox import SEED_DRAW, like_overloads, random_samples
from gems.ops.random.uniform_ import uniform_
from gems.spec import OpSpec

SPECS = [
    OpSpec(
        name="rand_like", family="random", impls=like_overloads("rand_like", uniform_), call=torch.rand_like,
        samples=random_samples("like_samples", "rand_like", "uniform"), dtypes=FLOATS,
        aten_decisions=SEED_DRAW,
    ),
]
