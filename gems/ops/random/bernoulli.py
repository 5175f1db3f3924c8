"""bernoulli: a new tensor of 0s and 1s, each 1 with its probability (bernoulli_.py draws them).

- ``bernoulli(self)`` and ``bernoulli.out``: the probabilities are ``self``'s values (a floating tensor);
- ``bernoulli.p`` / ``bernoulli.float_out``: one number p for every element of ``self``'s shape and dtype;
- ``bernoulli.Tensor`` / ``bernoulli.Tensor_out``: a tensor p broadcastable to ``self``.
The result is contiguous in ``self``'s dtype, as ATen's (empty_like with the legacy contiguous format).
"""

import torch
import triton.language as tl  # noqa: F401 (the interpreter runs a module's kernels only when tl is in it)

from gems.dtypes import ALL, ATEN_NAMES, FLOATS
from gems.ops.random.bernoulli_ import bernoulli_float, bernoulli_tensor
from gems.ops.random.philox import SEED_DRAW, draws_perf, random_samples
from gems.spec import OpSpec


def _new(self):
    return torch.empty_like(self, memory_format=torch.contiguous_format)


def _resized(out, shape):
    """out= resized to ``shape`` where it differs (a resize_ that changes nothing is still an ATen call, which
    keeps the call off the native layer's plans)."""
    if out.shape != shape:
        out.resize_(shape)
    return out


def bernoulli_out(self, *, generator=None, out):
    if self.dtype not in FLOATS:
        raise NotImplementedError(f'"bernoulli_tensor_cpu_p_" not implemented for '
                                  f"'{ATEN_NAMES.get(self.dtype, self.dtype)}'")
    return bernoulli_tensor(_resized(out, self.shape), self, generator=generator)


def bernoulli(self, *, generator=None):
    return bernoulli_out(self, generator=generator, out=_new(self))


def bernoulli_p(self, p, *, generator=None):
    return bernoulli_float(_new(self), p, generator=generator)


def bernoulli_float_out(self, p=0.5, *, generator=None, out):
    return bernoulli_float(_resized(out, self.shape), p, generator=generator)


def bernoulli_p_tensor(self, p, *, generator=None):
    return bernoulli_tensor(_new(self), p, generator=generator)


def bernoulli_tensor_out(self, p, *, generator=None, out):
    return bernoulli_tensor(_resized(out, self.shape), p, generator=generator)


SPECS = [
    OpSpec(
        name="bernoulli", family="random",
        impls={"bernoulli": bernoulli, "bernoulli.out": bernoulli_out, "bernoulli.p": bernoulli_p,
               "bernoulli.float_out": bernoulli_float_out, "bernoulli.Tensor": bernoulli_p_tensor,
               "bernoulli.Tensor_out": bernoulli_tensor_out},
        call=torch.bernoulli, samples=random_samples("bernoulli_samples", inplace=False), dtypes=ALL,
        perf=draws_perf("bernoulli"),
        skips={("nvidia", "*", variant): "ATen's CUDA kernel asserts on the device for p outside [0, 1] and ends the "
               "process" for variant in ("p-above-one-error", "p-tensor-above-one-error", "p-tensor-nan-error")},
        aten_decisions=SEED_DRAW,
    ),
]
