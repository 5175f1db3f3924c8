"""random_ (random_, random_.to, random_.from): uniform integers in ``self``'s dtype, ``low + r % span``
for r of 32 random bits (span up to 2^32) or 64 (distributions.py).

Ranges, as ATen's: random_() is [0, 2^mantissa digits] for floats (2^24 for fp32), [0, max] for integer
dtypes, [0, 1] for bool; random_(to) is [0, to); random_(from, None) runs to the same upper end as
random_(), and random_(int64 min, None) takes all 2^64 values of int64. ATen checks from < to, then
that from and to - 1 are within the dtype's range (its lowest and largest values for floats).
Floats beyond 2^digits (where ATen moves the bounds to representable values) and the full 64-bit range
of a dtype other than int64 are left to ATen (a counted fallback).
"""

import torch
import triton.language as tl  # noqa: F401 (the interpreter runs a module's kernels only when tl is in it)

from gems.dtypes import ALL
from gems.ops.random.distributions import INTEGERS, draw
from gems.ops.random.philox import C_NAMES, SEED_DRAW, draws_perf, random_samples
from gems.runtime.registration import Fallback
from gems.spec import OpSpec

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_DIGITS = {torch.float16: 11, torch.bfloat16: 8, torch.float32: 24, torch.float64: 53}


def _dtype_range(dtype: torch.dtype) -> tuple[float, float]:
    if dtype is torch.bool:
        return 0, 1
    info = torch.finfo(dtype) if dtype.is_floating_point else torch.iinfo(dtype)
    return info.min, info.max


def _top(dtype: torch.dtype) -> int:
    """The largest value random_() draws in ``dtype``."""
    if dtype.is_floating_point:
        return 2 ** _DIGITS[dtype]
    return 1 if dtype is torch.bool else torch.iinfo(dtype).max


def _check_in_range(low: int, high_inclusive: int, dtype: torch.dtype) -> None:
    smallest, largest = _dtype_range(dtype)
    for value, what in ((low, "from"), (high_inclusive, "to - 1")):
        if not smallest <= value <= largest:
            raise RuntimeError(f"{what} is out of bounds for {C_NAMES[dtype]}")
    if dtype.is_floating_point and max(abs(low), abs(high_inclusive)) > 2 ** _DIGITS[dtype]:
        raise Fallback(f"bounds beyond the integers {dtype} represents exactly")


def random_integers(self, low: int, high, generator):
    """Fill ``self`` with integers in [low, high) (high None: up to the dtype's top, as ATen's random_.from)."""
    if self.dtype not in ALL:
        raise Fallback(f"dtype {self.dtype}")
    if high is not None:
        if not low < high:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
        _check_in_range(low, high - 1, self.dtype)
        span = high - low
    elif low != _INT64_MIN:
        top = _top(self.dtype)
        _check_in_range(low, top, self.dtype)
        span = top - low + 1
    elif self.dtype is torch.int64:
        span = 0  # all 2^64 values
    else:
        raise Fallback(f"the full 64-bit range drawn into {self.dtype}")
    if self.numel() == 0:
        return self
    return draw(self, INTEGERS, generator, low=low, span=span)


def random_(self, *, generator=None):
    return random_integers(self, 0, _top(self.dtype) + 1, generator)


def random_to(self, to, *, generator=None):
    return random_integers(self, 0, to, generator)


def random_from(self, from_, to=None, *, generator=None):
    return random_integers(self, from_, to, generator)


SPECS = [
    OpSpec(
        name="random_", family="random",
        impls={"random_": random_, "random_.to": random_to, "random_.from": random_from},
        call=torch.Tensor.random_, samples=random_samples("random_samples"), dtypes=ALL,
        perf=draws_perf("random_"),
        aten_decisions=SEED_DRAW,
    ),
]
