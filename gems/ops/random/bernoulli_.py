"""bernoulli_ (bernoulli_.float, bernoulli_.Tensor): each element of ``self`` becomes 1 with probability
p and 0 otherwise, ``u < p`` for u uniform in [0, 1) (distributions.py), in ``self``'s dtype (any: floats,
integers, bool). ``p`` is a number, or a floating tensor broadcastable to ``self`` read per element.

ATen checks p in [0, 1] (NaN fails): a number on the host; a tensor's values on the CPU before drawing,
while its CUDA kernel asserts on the device (which ends the process). gems does the same on each side
(philox.host_checks): compiled kernels assert in the draw itself (one launch, no host synchronisation, so
the native layer replays the call); where kernels are interpreted (their asserts are off), one small kernel
and one read back check the values before the draw and the call raises ATen's CPU error.
"""

import torch
import triton.language as tl  # noqa: F401 (the interpreter runs a module's kernels only when tl is in it)

from gems.dtypes import ALL, ATEN_NAMES, FLOATS
from gems.ops.random.distributions import BERNOULLI, draw
from gems.ops.random.philox import SEED_DRAW, any_outside, draws_perf, host_checks, random_samples
from gems.spec import OpSpec


def check_p(p: float) -> None:
    if not 0.0 <= p <= 1.0:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")


def checked_p_tensor(p: torch.Tensor, shape) -> torch.Tensor:
    """``p`` expanded to ``shape`` (RuntimeError as ATen's expand when it does not broadcast), after
    checking its dtype and, where kernels are interpreted, that its values are in [0, 1] (compiled kernels
    assert it as they draw)."""
    if p.dtype not in FLOATS:
        raise NotImplementedError(f'"bernoulli_tensor_cpu_p_" not implemented for '
                                  f"'{ATEN_NAMES.get(p.dtype, p.dtype)}'")
    expanded = p.expand(shape)
    if host_checks() and any_outside(p, 0.0, 1.0):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    return expanded


def bernoulli_float(self, p=0.5, *, generator=None):
    check_p(p)
    return draw(self, BERNOULLI, generator, p)


def bernoulli_tensor(self, p, *, generator=None):
    p = checked_p_tensor(p, self.shape)
    return draw(self, BERNOULLI, generator, a_tensor=p, assert_p=not host_checks())


SPECS = [
    OpSpec(
        name="bernoulli_", family="random",
        impls={"bernoulli_.float": bernoulli_float, "bernoulli_.Tensor": bernoulli_tensor},
        call=torch.Tensor.bernoulli_, samples=random_samples("bernoulli_samples", inplace=True), dtypes=ALL,
        perf=draws_perf("bernoulli_"),
        skips={("nvidia", "*", variant): "ATen's CUDA kernel asserts on the device for p outside [0, 1] and ends the "
               "process" for variant in ("p-tensor-above-one-error", "p-tensor-nan-error")},
        aten_decisions=SEED_DRAW,
    ),
]
