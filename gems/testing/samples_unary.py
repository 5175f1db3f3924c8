"""Samples of the unary math and activation operators (gems/ops/pointwise/unary_shared.py references them):
fixed values at a function's domain edges, ATen's composite aliases, activations' numbers at other values
than their defaults (elu's alpha, softplus' beta and threshold...), error calls, and special values left out
where ATen's CPU kernel disagrees with itself. Same signature as every generator:
``samples(dtype, device, quick) -> list[Sample]``, lazy.
"""

from __future__ import annotations

import math
from dataclasses import replace

import torch

from gems.spec import Sample
from gems.testing.samples import REJECT_HOST_DTYPE, make_tensor, shape_for, special_values


def value_samples(values, variant="domain-edges", call=None, expects=None, kwargs=None):
    """``call(x)`` over fixed float ``values`` (rounded to the case's floating dtype), where random values
    rarely land: a domain's ends and just outside them (log of -0.0, acos of 1 + ulp, logit at its eps).
    Values given as ``("ulp-above", v)`` / ``("ulp-below", v)`` become v's neighbour in the dtype."""
    kwargs = dict(kwargs or {})

    def samples(dtype, device, quick):
        if not dtype.is_floating_point:
            return []

        def args():
            return (torch.tensor([_value(v, dtype) for v in values], dtype=torch.float64).to(dtype).to(device),)

        return [Sample(variant, args, kwargs, call=call, expects=expects)]

    return samples


def _value(value, dtype):
    if not isinstance(value, tuple):
        return value
    where, v = value
    t = torch.tensor(v, dtype=dtype)
    toward = torch.tensor(float("inf") if where == "ulp-above" else float("-inf"), dtype=dtype)
    return torch.nextafter(t, toward).item()


def alias_calls(*aliases, domain=None):
    """Variants calling ATen's CompositeImplicitAutograd aliases (arcsinh, special_expm1, relu6...), each
    expecting the overload its decomposition runs: ``(variant, call, expects)`` with ``call(x)``."""
    domain = dict(domain or {})

    def samples(dtype, device, quick):
        shape = shape_for(quick)
        return [Sample(variant, lambda: (make_tensor(shape, dtype, device, **domain),), call=call, expects=expects)
                for variant, call, expects in aliases]

    return samples


def scalar_variants(*variants, domain=None, grad=False, expects=None):
    """``call(x, **kwargs)`` on a random tensor for each ``(variant, kwargs)``: an activation's numbers
    (alpha, beta, lambd) at other values than their defaults, expecting the overload ``expects``; with
    ``grad``, a gradient variant each (floating dtypes)."""
    domain = dict(domain or {})

    def samples(dtype, device, quick):
        shape = shape_for(quick)
        cases = []
        for variant, kwargs in variants:
            cases.append(Sample(variant, lambda: (make_tensor(shape, dtype, device, **domain),), kwargs,
                                expects=expects))
            if grad and dtype.is_floating_point:
                cases.append(Sample(f"{variant}-grad",
                                    lambda: (make_tensor(shape, dtype, device, **domain).requires_grad_(),),
                                    kwargs, grad=True))
        return cases

    return samples


def error_calls(*errors, operands=1):
    """Inputs ATen refuses, listed once (under float32): ``(variant, call)`` with ``call(*tensors)`` on
    ``operands`` small random tensors; gems must raise ATen's exception type."""

    def samples(dtype, device, quick):
        if dtype != REJECT_HOST_DTYPE:
            return []
        return [Sample(variant, lambda: tuple(make_tensor((3, 4), dtype, device) for _ in range(operands)), call=call)
                for variant, call in errors]

    return samples


def composite_samples(inplace, out, overloads):
    """For an operator whose every overload is CompositeImplicitAutograd (absolute, square): the declaration's
    call, ``inplace(x)`` and ``out(x, out=...)``, expecting the ``overloads`` (functional, in-place, out) its
    decomposition runs, on random values and special values, and a gradient (floating dtypes)."""
    functional, in_place, with_out = overloads

    def samples(dtype, device, quick):
        shape = shape_for(quick)
        make = lambda: (make_tensor(shape, dtype, device),)
        cases = [
            Sample("contiguous", make, expects=functional),
            Sample("special-values", lambda: (special_values(dtype, device),), expects=functional),
            Sample("inplace", make, call=inplace, expects=in_place),
            Sample("out", make, call=lambda x: out(x, out=torch.empty_like(x)), expects=with_out),
        ]
        if dtype.is_floating_point:
            cases.append(Sample("grad", lambda: (make_tensor(shape, dtype, device).requires_grad_(),), grad=True,
                                expects=functional))
        return cases

    return samples


def without_values(generator, values, operand=1, variants=("special-values",)):
    """``generator``'s samples, with the elements where ``args[operand]`` holds one of ``values`` (NaN matches
    NaN, -0.0 only -0.0) left out of the variants named ``variants*``: for inputs where ATen's CPU kernel
    answers differently in its vectorized loop and in its scalar tail (which elements fall in the tail depends
    on the CPU's vector width), so that no answer agrees with ATen on every element of the CPU reference."""

    def samples(dtype, device, quick):
        return [replace(s, args=_filtered(s.args, values, operand)) if s.variant.startswith(variants) else s
                for s in generator(dtype, device, quick)]

    return samples


def _filtered(build, values, operand):
    def args():
        made = build()
        x = made[operand]
        drop = torch.zeros(x.shape, dtype=torch.bool, device=x.device)
        for v in values:
            if v != v:
                drop |= x != x
            elif v == 0:
                drop |= (x == 0) & (torch.signbit(x) == (math.copysign(1.0, v) < 0))
            else:
                drop |= x == v
        return tuple(a[~drop] if isinstance(a, torch.Tensor) and a.shape == x.shape else a for a in made)

    return args
