"""randint (randint, .generator, .low, .low_generator and their four out= forms): ``size`` of
``dtype`` (int64 if None) filled with integers in [low, high) by random_'s draw (random_.py), with its
checks: low < high, and low and high - 1 within the dtype's range."""

import torch
import triton.language as tl  # noqa: F401 (the interpreter runs a module's kernels only when tl is in it)

from gems.dtypes import ALL
from gems.ops.creation.fill import check_options
from gems.ops.random.philox import SEED_DRAW, draws_perf, random_samples
from gems.ops.random.random_ import random_integers
from gems.spec import OpSpec


def randint_low_generator(low, high, size, *, generator, dtype=None, layout=None, device=None, pin_memory=None):
    dtype = torch.int64 if dtype is None else dtype
    check_options(dtype, layout, device, pin_memory)
    return random_integers(torch.empty(size, dtype=dtype, device=device), low, high, generator)


def randint_low(low, high, size, *, dtype=None, layout=None, device=None, pin_memory=None):
    return randint_low_generator(low, high, size, generator=None, dtype=dtype, layout=layout, device=device,
                                 pin_memory=pin_memory)


def randint_generator(high, size, *, generator, dtype=None, layout=None, device=None, pin_memory=None):
    return randint_low_generator(0, high, size, generator=generator, dtype=dtype, layout=layout, device=device,
                                 pin_memory=pin_memory)


def randint(high, size, *, dtype=None, layout=None, device=None, pin_memory=None):
    return randint_low_generator(0, high, size, generator=None, dtype=dtype, layout=layout, device=device,
                                 pin_memory=pin_memory)


def randint_low_generator_out(low, high, size, *, generator, out):
    out.resize_(size)
    return random_integers(out, low, high, generator)


def randint_low_out(low, high, size, *, out):
    return randint_low_generator_out(low, high, size, generator=None, out=out)


def randint_generator_out(high, size, *, generator, out):
    return randint_low_generator_out(0, high, size, generator=generator, out=out)


def randint_out(high, size, *, out):
    return randint_low_generator_out(0, high, size, generator=None, out=out)


SPECS = [
    OpSpec(
        name="randint", family="random",
        impls={"randint": randint, "randint.generator": randint_generator, "randint.low": randint_low,
               "randint.low_generator": randint_low_generator, "randint.out": randint_out,
               "randint.generator_out": randint_generator_out, "randint.low_out": randint_low_out,
               "randint.low_generator_out": randint_low_generator_out},
        call=torch.randint, samples=random_samples("randint_samples"), dtypes=ALL, perf=draws_perf("randint"),
        aten_decisions=SEED_DRAW,
    ),
]
