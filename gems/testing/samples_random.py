"""Sample generators of the random operators (gems/ops/random/): statistical verdicts, no oracle. This module
names them for the declarations (:func:`quick_trimmed`) and times them (:func:`draws_perf`); they live by
family in samples_random_tensors.py, samples_random_integers.py and samples_random_nn.py.

Every sample carries a :class:`gems.testing.draws.Draw` (``Sample.random``) built from a law of
gems.testing.draws and the call's parameters; the conformance runner adds the checks every random case
gets (ATen's shapes, dtypes and strides; the same numbers under the same seed; other numbers next call).
Samples are large enough for the tests to see something (8192 values in quick mode, 2^20 in full mode)
and keep the variants every operator has: an odd shape, 0-d, empty, transposed and strided views (a
strided in-place draw must leave the gaps alone), a ``generator=``, ``out=`` forms, and bad input.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from gems.spec import Sample
from gems.testing import samples_random_integers, samples_random_nn, samples_random_tensors
from gems.testing.draws import (
    bernoulli_law,
    integer_law,
)
from gems.testing.samples_random_common import (
    CORE_VARIANTS,
    PRIMARY,
    law_of,
    verdict_of,
)
from gems.testing.samples_random_nn import dropout_law

_FAMILIES = (samples_random_tensors, samples_random_integers, samples_random_nn)


def quick_trimmed(name: str, *args, **kwargs) -> Callable:
    """The sample generator ``name(*args, **kwargs)`` of its family module, less the variants that a dtype other
    than PRIMARY skips in quick mode (see CORE_VARIANTS)."""
    owner = next(m for m in _FAMILIES if hasattr(m, name))
    generator = getattr(owner, name)(*args, **kwargs)

    def samples(dtype, device, quick):
        cases = generator(dtype, device, quick)
        if not quick or dtype == PRIMARY:
            return cases
        return [s for s in cases if s.variant in CORE_VARIANTS or s.variant.endswith("-error")]

    return samples


# --------------------------------------------------------------------------- perf

# gems-perf judges a perf case's draws on its first values only: a prefix of independent draws is a
# sample of the law too, and sorting 64M values on the CPU would take longer than the timing.
PERF_JUDGED = 1 << 20


def draws_perf(kind: str, shapes: str = "random"):
    """The PerfSpec of a random operator at a flat shape: the call, its statistical verdict (on the first
    PERF_JUDGED values) and the bytes it moves (what it writes, and reads: dropout's input, bernoulli's
    probabilities)."""
    from gems.spec import PerfSpec
    from gems.testing.perf_inputs import tensor_bytes
    from gems.testing.samples import make_tensor

    head = lambda t: t.flatten()[:PERF_JUDGED]
    inplace = {"uniform_": ("uniform", ()), "normal_": ("normal", ()), "exponential_": ("exponential", ()),
               "bernoulli_": ("bernoulli", (0.5,))}

    def inputs(shape, dtype, device):
        size = tuple(shape)
        if kind in inplace:
            law = law_of(*inplace[kind])
            return Sample("perf", (torch.empty(size, dtype=dtype, device=device),),
                          call=lambda x: getattr(x, kind)(*inplace[kind][1]),
                          random=verdict_of(lambda v, args, kw, outs: law(v, head(outs[0]))))
        if kind in ("rand", "randn"):
            law = law_of("uniform" if kind == "rand" else "normal", ())
            return Sample("perf", (size,), {"dtype": dtype, "device": device}, call=getattr(torch, kind),
                          random=verdict_of(lambda v, args, kw, outs: law(v, head(outs[0]))))
        if kind in ("random_", "randint"):
            call = (lambda x: x.random_(0, 100)) if kind == "random_" else (
                lambda x: torch.randint(0, 100, x.shape, dtype=x.dtype, device=x.device))
            return Sample("perf", (torch.empty(size, dtype=dtype, device=device),), call=call,
                          random=verdict_of(lambda v, args, kw, outs: integer_law(v, head(outs[0]), 0, 100)))
        if kind == "bernoulli":  # the probabilities are the input's values
            return Sample("perf", (make_tensor(size, dtype, device, low=0.0, high=1.0),), call=torch.bernoulli,
                          random=verdict_of(lambda v, args, kw, outs: bernoulli_law(v, head(outs[0]), head(args[0]))))
        if kind == "native_dropout":
            return Sample("perf", (make_tensor(size, dtype, device), 0.5, True), call=torch.native_dropout,
                          random=verdict_of(lambda v, args, kw, outs: dropout_law(
                              v, head(args[0]), head(outs[0]), head(outs[1]), 0.5)))
        raise ValueError(f"no perf inputs for {kind!r}")

    def bytes_moved(sample, result):
        written = result if isinstance(result, tuple) else (result,)
        read = sample.args[:1] if kind in ("native_dropout", "bernoulli") else ()
        return tensor_bytes(*read, *written)

    return PerfSpec(inputs=inputs, shapes=shapes, bytes=bytes_moved)
