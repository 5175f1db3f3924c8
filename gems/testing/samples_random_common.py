"""Shared pieces of the random operators' sample generators (gems/testing/samples_random*.py): draw sizes,
the quick-mode variant policy, verdicts from a law's name and its parameters, factory and generator helpers."""

from __future__ import annotations

from collections.abc import Callable

import torch

from gems.testing.draws import (
    Draw,
    Verdict,
    bernoulli_law,
    exponential_law,
    integer_law,
    normal_law,
    uniform_law,
)

QUICK_DRAWS, FULL_DRAWS = (64, 128), (1024, 1024)
ODD = (13, 17)
# Quick mode (CI's CPU time): every variant runs in float32; the other dtypes, whose kernels differ from
# float32's only by the casts at load and store (and float64 by its 53-bit uniforms), run their operator's
# main forms (CORE_VARIANTS), the ranges of their own (random_, randint) and every error. Full mode runs all.
PRIMARY = torch.float32
CORE_VARIANTS = ("contiguous", "low-high", "high", "p-tensor", "p-float", "float-float", "tensor-tensor", "to",
                 "from-to", "wide-span", "span-past-2^32", "full-range", "default-dtype", "replacement",
                 "no-replacement", "training", "eval", "range", "mean-std", "lambda")
GAP_FILL = 7.0  # what a strided view's gaps hold before the draw, and must hold after it


def draw_shape(quick: bool) -> tuple[int, int]:
    return QUICK_DRAWS if quick else FULL_DRAWS


def verdict_of(judge: Callable, varies: bool = True) -> Draw:
    """A Draw whose check runs ``judge(verdict, args, kwargs, outputs)`` on a fresh :class:`Verdict`."""

    def check(args, kwargs, outputs):
        verdict = Verdict()
        judge(verdict, args, kwargs, outputs)
        return verdict.message()

    return Draw(check, varies)


def on_device_of(call, dtype=True):
    """``call(*args, dtype=like.dtype, device=like.device)`` for a factory's sample whose first argument is
    an empty ``like`` tensor: a device= argument would stay on the CPU where samples are made on the CPU
    and moved (a device without ATen kernels), a tensor moves. dtype=False passes the device only."""
    def factory(like, *args, **kwargs):
        options = {"dtype": like.dtype, "device": like.device} if dtype else {"device": like.device}
        return call(*args, **options, **kwargs)

    return factory


def generator_for(device) -> torch.Generator | None:
    """A generator= argument for ``device`` (None while listing cases on the meta device)."""
    return None if str(device) == "meta" else torch.Generator(device=device)


# --------------------------------------------------------------------------- laws by name


def law_of(kind: str, params: tuple) -> Callable:
    """``judge(verdict, values)`` for a law and its parameters as the operator takes them."""
    laws = {
        "uniform": lambda v, x: uniform_law(v, x, *(params or (0.0, 1.0))),
        "normal": lambda v, x: normal_law(v, x, *(params or (0.0, 1.0))),
        "exponential": lambda v, x: exponential_law(v, x, *(params or (1.0,))),
        "bernoulli": lambda v, x: bernoulli_law(v, x, *(params or (0.5,))),
        "integers": lambda v, x: integer_law(v, x, *params),
    }
    return laws[kind]


def single_value(kind: str, params: tuple) -> bool:
    """Whether the law allows one value only (the next call cannot differ)."""
    if kind == "uniform" and len(params) == 2:
        return params[0] == params[1]
    if kind == "normal" and len(params) == 2:
        return params[1] == 0
    if kind == "bernoulli" and params:
        return params[0] in (0.0, 1.0)
    if kind == "exponential" and params:
        return params[0] == float("inf")
    if kind == "integers":
        return params[1] - params[0] == 1
    return False
