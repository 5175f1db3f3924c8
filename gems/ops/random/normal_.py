"""normal_: fills ``self`` with N(mean, std^2) draws (Box-Muller, distributions.py); randn, randn_like and
the normal factories call it too. ATen checks std >= 0 (NaN fails) before anything else, then the dtype."""

import torch
import triton.language as tl  # noqa: F401 (the interpreter runs a module's kernels only when tl is in it)

from gems.dtypes import ATEN_NAMES, FLOATS
from gems.ops.random.distributions import NORMAL, draw
from gems.ops.random.philox import SEED_DRAW, draws_perf, inplace_samples
from gems.spec import OpSpec


def check_std(std: float) -> None:
    if not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")


def check_floating(dtype: torch.dtype, kernel: str = "normal_kernel_cpu") -> None:
    if dtype not in FLOATS:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{ATEN_NAMES.get(dtype, dtype)}\'')


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    check_std(std)
    check_floating(self.dtype)
    return draw(self, NORMAL, generator, mean, std)


SPECS = [
    OpSpec(
        name="normal_", family="random", impls={"normal_": normal_}, call=torch.Tensor.normal_,
        samples=inplace_samples("normal_", "normal", more=(("mean-std", (2.5, 0.5)), ("zero-std", (-1.0, 0.0))),
                                errors=(("negative-std-error", (0.0, -1.0), None),
                                        ("nan-std-error", (0.0, float("nan")), None),
                                        ("integer-self-error", (), torch.int64))),
        dtypes=FLOATS, perf=draws_perf("normal_"),
        aten_decisions=SEED_DRAW,
    ),
]
