"""randint_like (its twelve overloads: high or low and high, a high given as a CPU scalar tensor, with or
without a generator, and their out= forms): the input's layout (torch.empty_like's rules; dtype= changes
the type) filled with integers in [low, high) by random_'s draw (random_.py); the input's values are not
read. out= forms resize ``out`` to the input's shape."""

import torch
import triton.language as tl  # noqa: F401 (the interpreter runs a module's kernels only when tl is in it)

from gems.dtypes import ALL
from gems.ops.creation.fill import check_options
from gems.ops.random.philox import SEED_DRAW, random_samples
from gems.ops.random.random_ import random_integers
from gems.spec import OpSpec


def _high_of(high):
    if isinstance(high, torch.Tensor):
        if high.dim() != 0 or high.device.type != "cpu":
            raise RuntimeError("high must be a scalar tensor and on CPU")
        return int(high.item())
    return high


def _like(self, low, high, generator, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    dtype = self.dtype if dtype is None else dtype
    check_options(dtype, layout, device if device is not None else self.device, pin_memory)
    out = torch.empty_like(self, dtype=dtype, device=device, memory_format=memory_format)
    return random_integers(out, low, _high_of(high), generator)


def _into(self, low, high, generator, out):
    out.resize_(self.shape)
    return random_integers(out, low, _high_of(high), generator)


def randint_like(self, high, **options):
    return _like(self, 0, high, None, **options)


def randint_like_generator(self, high, *, generator, **options):
    return _like(self, 0, high, generator, **options)


def randint_like_low(self, low, high, **options):
    return _like(self, low, high, None, **options)


def randint_like_low_generator(self, low, high, *, generator, **options):
    return _like(self, low, high, generator, **options)


def randint_like_out(self, high, *, memory_format=None, out):
    return _into(self, 0, high, None, out)


def randint_like_generator_out(self, high, *, generator, memory_format=None, out):
    return _into(self, 0, high, generator, out)


def randint_like_low_out(self, low, high, *, memory_format=None, out):
    return _into(self, low, high, None, out)


def randint_like_low_generator_out(self, low, high, *, generator, memory_format=None, out):
    return _into(self, low, high, generator, out)


SPECS = [
    OpSpec(
        name="randint_like", family="random",
        impls={"randint_like": randint_like, "randint_like.Tensor": randint_like,
               "randint_like.generator": randint_like_generator,
               "randint_like.Tensor_generator": randint_like_generator, "randint_like.low_dtype": randint_like_low,
               "randint_like.low_generator_dtype": randint_like_low_generator,
               "randint_like.out": randint_like_out, "randint_like.Tensor_out": randint_like_out,
               "randint_like.generator_out": randint_like_generator_out,
               "randint_like.Tensor_generator_out": randint_like_generator_out,
               "randint_like.low_dtype_out": randint_like_low_out,
               "randint_like.low_generator_dtype_out": randint_like_low_generator_out},
        call=torch.randint_like, samples=random_samples("randint_like_samples"), dtypes=ALL,
        aten_decisions=SEED_DRAW,
    ),
]
