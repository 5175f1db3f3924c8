"""rand (rand, rand.generator, rand.out): ``size`` drawn from U[0, 1) by uniform_ (uniform_.py).
rand.generator_out is CompositeImplicitAutograd: ATen decomposes it into resize_ and uniform_."""

import torch
import triton.language as tl  # noqa: F401 (the interpreter runs a module's kernels only when tl is in it)

from gems.dtypes import FLOATS
from gems.ops.random.philox import SEED_DRAW, draws_perf, random_samples, sized_overloads
from gems.ops.random.uniform_ import uniform_
from gems.spec import OpSpec


def rand_out(size, *, out):
    out.resize_(size)
    return uniform_(out)


SPECS = [
    OpSpec(
        name="rand", family="random", impls={**sized_overloads("rand", uniform_), "rand.out": rand_out},
        call=torch.rand,
        samples=random_samples("factory_samples", torch.rand, "rand", "uniform", generator_out_expects="uniform_"),
        dtypes=FLOATS, perf=draws_perf("rand"),
        aten_decisions=SEED_DRAW,
    ),
]
