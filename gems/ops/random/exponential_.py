"""exponential_: fills ``self`` with Exp(lambd) draws, ``-log(v) / lambd`` for v uniform in (0, 1] with
ATen's guard near 1 (distributions.py). ATen checks lambd > 0 (NaN fails) and a floating ``self``."""

import torch
import triton.language as tl  # noqa: F401 (the interpreter runs a module's kernels only when tl is in it)

from gems.dtypes import FLOATS
from gems.ops.random.distributions import EXPONENTIAL, draw
from gems.ops.random.philox import SEED_DRAW, draws_perf, inplace_samples
from gems.spec import OpSpec


def exponential_(self, lambd=1.0, *, generator=None):
    if not lambd > 0.0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    if self.dtype not in FLOATS:
        raise RuntimeError("Exponential distribution is a continuous probability distribution. dtype must be a "
                           f"floating point but you specified {self.dtype}")
    return draw(self, EXPONENTIAL, generator, lambd)


SPECS = [
    OpSpec(
        name="exponential_", family="random", impls={"exponential_": exponential_},
        call=torch.Tensor.exponential_,
        samples=inplace_samples("exponential_", "exponential", more=(("lambda", (3.5,)), ("small-lambda", (0.25,))),
                                errors=(("zero-lambda-error", (0.0,), None), ("negative-lambda-error", (-1.0,), None),
                                        ("nan-lambda-error", (float("nan"),), None),
                                        ("integer-self-error", (), torch.int64))),
        dtypes=FLOATS, perf=draws_perf("exponential_"),
        aten_decisions=SEED_DRAW,
    ),
]
