"""uniform_: fills ``self`` with U[from, to) draws (the distribution kernel of distributions.py); the
factories rand and rand_like call it too.

ATen's checks, in its order: a floating ``self``; ``from`` and ``to`` finite within the dtype's range;
``from <= to``; ``to - from`` within the dtype's range. A value that rounds to ``to`` in the result dtype
becomes ``from`` (ATen's reversed bound), so every value is in [from, to).
"""

import torch
import triton.language as tl  # noqa: F401 (the interpreter runs a module's kernels only when tl is in it)

from gems.dtypes import ATEN_NAMES, FLOATS
from gems.ops.random.distributions import UNIFORM, draw
from gems.ops.random.philox import C_NAMES, SEED_DRAW, draws_perf, inplace_samples
from gems.spec import OpSpec


def check_uniform(dtype: torch.dtype, low: float, high: float, name: str = "check_uniform_bounds") -> None:
    if dtype not in FLOATS:
        raise NotImplementedError(f'"{name}" not implemented for \'{ATEN_NAMES.get(dtype, dtype)}\'')
    limit = torch.finfo(dtype).max
    for value, what in ((low, "from"), (high, "to")):
        if not -limit <= value <= limit:
            raise RuntimeError(f"{what} is out of bounds for {C_NAMES[dtype]}")
    if not low <= high:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={low:g} > to={high:g}")
    if high - low > limit:
        raise RuntimeError(f"uniform_ expects to-from <= std::numeric_limits<{C_NAMES[dtype]}>::max(), but found "
                           f"to={high:g} and from={low:g} which result in to-from to exceed the limit")


def uniform_(self, from_=0.0, to=1.0, *, generator=None):
    if self.numel() == 0:
        return self  # ATen returns before its checks
    check_uniform(self.dtype, from_, to)
    return draw(self, UNIFORM, generator, from_, to)


SPECS = [
    OpSpec(
        name="uniform_", family="random", impls={"uniform_": uniform_}, call=torch.Tensor.uniform_,
        samples=inplace_samples("uniform_", "uniform", more=(("range", (-3.0, 5.0)), ("equal-bounds", (2.0, 2.0))),
                                errors=(("from-greater-error", (2.0, 1.0), None),
                                        ("inf-error", (0.0, float("inf")), None),
                                        ("nan-error", (float("nan"), 1.0), None),
                                        ("integer-self-error", (), torch.int64))),
        dtypes=FLOATS, perf=draws_perf("uniform_"),
        aten_decisions=SEED_DRAW,
    ),
]
