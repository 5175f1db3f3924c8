"""logspace (Scalar and 0-d Tensor bounds; out=): ``base`` raised to linspace's values, by linspace.py's kernel
(libdevice's pow in the compute dtype; integer results raise an fp32 base to fp32 exponents and truncate, as
ATen's CUDA kernel does). One value is ``base ** start`` computed in double, as in ATen."""

import math

import torch

from gems.dtypes import ALL
from gems.ops.creation.fill import factory_perf, factory_samples
from gems.ops.creation.linspace import bound_values, new_space, space_out
from gems.spec import OpSpec


def logspace(start, end, steps, base=10.0, *, dtype=None, layout=None, device=None, pin_memory=None):
    start, end = bound_values("logspace", start, end)
    return new_space(start, end, steps, base, dtype, layout, device, pin_memory)


def logspace_out(start, end, steps, base=10.0, *, out):
    start, end = bound_values("logspace", start, end)
    return space_out(start, end, steps, base, out)


def _logspace_calls(dtype, device, quick):
    from gems.testing.samples_copy import space_calls

    return space_calls(torch.logspace, "logspace", dtype, device, quick)


SPECS = [
    OpSpec(
        name="logspace", family="creation",
        impls={"logspace": logspace, "logspace.out": logspace_out, "logspace.Tensor_Tensor": logspace,
               "logspace.Tensor_Scalar": logspace, "logspace.Scalar_Tensor": logspace,
               "logspace.Tensor_Tensor_out": logspace_out, "logspace.Tensor_Scalar_out": logspace_out,
               "logspace.Scalar_Tensor_out": logspace_out},
        call=torch.logspace, samples=factory_samples(_logspace_calls), dtypes=ALL[:-1],  # not bool
        perf=factory_perf(lambda like, shape: torch.logspace(-1.5, 2.5, math.prod(shape), dtype=like.dtype,
                                                              device=like.device)),
    ),
]
