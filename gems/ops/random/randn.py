"""randn (randn, randn.generator): ``size`` drawn from N(0, 1) by normal_ (normal_.py). randn.out and
randn.generator_out are CompositeImplicitAutograd: ATen decomposes them into resize_ and normal_."""

import torch
import triton.language as tl  # noqa: F401 (the interpreter runs a module's kernels only when tl is in it)

from gems.dtypes import FLOATS
from gems.ops.random.normal_ import normal_
from gems.ops.random.philox import SEED_DRAW, draws_perf, random_samples, sized_overloads
from gems.spec import OpSpec

SPECS = [
    OpSpec(
        name="randn", family="random", impls=sized_overloads("randn", normal_), call=torch.randn,
        samples=random_samples("factory_samples", torch.randn, "randn", "normal", out_expects="normal_",
                             generator_out_expects="normal_"), dtypes=FLOATS,
        perf=draws_perf("randn"),
        aten_decisions=SEED_DRAW,
    ),
]
