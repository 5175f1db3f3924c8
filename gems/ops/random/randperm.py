"""randperm (randperm, .generator, .out, .generator_out): a random permutation of 0..n-1.

Each index draws a 32-bit random key (the distribution kernel's integers, distributions.py) and gems'
sort (sorting/bitonic.py: stable; long rows radix sorted, radix.py) orders the keys; the indices in key order are the
permutation, stored in the result dtype (through the pointwise generator when it is not a contiguous
int64 tensor). As in ATen's CUDA randperm (random keys and a sort), indices whose keys tie keep their
order; with 32-bit keys that touches about n^2 / 2^33 pairs (under 0.5 for n = 2^16).

ATen's checks: n >= 0, n - 1 representable in the dtype (int8 up to 128 values, fp16 2049, fp32
2^24 + 1), a generator of the result's device; bool is not a permutation dtype.
"""

import torch

from gems.checks import checked_scalar
from gems.dtypes import ATEN_NAMES, NUMERIC
from gems.ops.creation.fill import check_options
from gems.ops.random.distributions import INTEGERS, draw, store_as
from gems.ops.random.philox import SEED_DRAW, random_samples
from gems.ops.sorting.bitonic import run_sort
from gems.spec import OpSpec

# The most values each float dtype holds exactly (ATen's check_supported_max_int_with_precision).
_FLOAT_LIMITS = {torch.float16: (2**11 + 1, "2049"), torch.float32: (2**24 + 1, "2^24+1"),
                 torch.float64: (2**53 + 1, "2^53+1")}


def randperm_generator_out(n, *, generator, out):
    if n < 0:
        raise RuntimeError(f"n must be non-negative, got{n}")
    if out.dtype not in NUMERIC:
        raise NotImplementedError(f"\"randperm\" not implemented for '{ATEN_NAMES.get(out.dtype, out.dtype)}'")
    checked_scalar(max(n - 1, 0), out.dtype)
    if out.dtype in _FLOAT_LIMITS and n > _FLOAT_LIMITS[out.dtype][0]:
        raise RuntimeError(f"n cannot be greater than {_FLOAT_LIMITS[out.dtype][1]} for "
                           f"{ATEN_NAMES[out.dtype]} type.")
    out.resize_(n)
    if n == 0:
        return out
    keys = draw(torch.empty(n, dtype=torch.int32, device=out.device), INTEGERS, generator, low=-(2**31), span=2**32)
    direct = out.dtype is torch.int64 and out.is_contiguous()
    indices = out if direct else torch.empty(n, dtype=torch.int64, device=out.device)
    run_sort(keys, 0, False, n, torch.empty_like(keys), indices)
    if not direct:
        store_as(indices, out)
    return out


def randperm_out(n, *, out):
    return randperm_generator_out(n, generator=None, out=out)


def randperm_generator(n, *, generator, dtype=None, layout=None, device=None, pin_memory=None):
    dtype = torch.int64 if dtype is None else dtype
    check_options(dtype, layout, device, pin_memory)
    if n < 0:
        raise RuntimeError(f"n must be non-negative, got{n}")
    return randperm_generator_out(n, generator=generator, out=torch.empty(n, dtype=dtype, device=device))


def randperm(n, *, dtype=None, layout=None, device=None, pin_memory=None):
    return randperm_generator(n, generator=None, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)


SPECS = [
    OpSpec(
        name="randperm", family="random",
        impls={"randperm": randperm, "randperm.generator": randperm_generator, "randperm.out": randperm_out,
               "randperm.generator_out": randperm_generator_out},
        call=torch.randperm, samples=random_samples("randperm_samples"), dtypes=NUMERIC,
        aten_decisions=SEED_DRAW,
        known_failures={("nvidia", "bfloat16", "contiguous"): "ATen's CUDA randperm has no bfloat16 kernel "
                                                               "(NotImplementedError, H200, torch 2.11); gems draws "
                                                               "the permutation, as ATen's CPU kernel does"},
    ),
]
