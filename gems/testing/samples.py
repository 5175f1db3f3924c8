"""Sample generators: every ``samples(dtype, device, quick)`` returns a list of :class:`Sample`.

The variants follow one vocabulary across operators: contiguous, noncontiguous-transposed,
noncontiguous-strided, broadcast, scalar-operand, 0d, empty, special-values, type-promotion, out,
inplace, grad. Quick mode (CI, the interpreter) uses small shapes; full mode (a real device) larger.
"""

from __future__ import annotations

import torch

from gems.spec import Sample

# Odd sizes so that masks run; the full sizes cross several blocks and the 2^16 boundary.
QUICK_SHAPE = (13, 17)
FULL_SHAPE = (257, 1023)


def shape_for(quick: bool) -> tuple[int, int]:
    return QUICK_SHAPE if quick else FULL_SHAPE


def make_tensor(shape, dtype, device, low=-4.0, high=4.0, int_low=-100, int_high=100):
    """Random values in [low, high) for floats, in [int_low, int_high] for integers, coin flips for bool.

    On the meta device (used to list cases without data) only the shape and dtype are made.
    """
    if str(device) == "meta":
        return torch.empty(shape, dtype=dtype, device="meta")
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, device="cpu").bool().to(device)
    if not dtype.is_floating_point:
        info = torch.iinfo(dtype)
        lo, hi = max(int_low, info.min), min(int_high, info.max)
        return torch.randint(lo, hi + 1, shape, dtype=dtype, device="cpu").to(device)
    values = torch.rand(shape, dtype=torch.float64) * (high - low) + low
    return values.to(dtype).to(device)


def special_values(dtype, device):
    """NaN, infinities, signed zeros, the extremes and the tiniest normals of ``dtype``."""
    if dtype == torch.bool:
        return torch.tensor([True, False, True, False], device=device)
    if not dtype.is_floating_point:
        info = torch.iinfo(dtype)
        return torch.tensor([info.min, info.max, 0, -1, 1, info.max - 1], dtype=dtype, device=device)
    info = torch.finfo(dtype)
    values = [float("nan"), float("inf"), float("-inf"), -0.0, 0.0, 1.0, -1.0, 0.5, -2.5,
              info.tiny, -info.tiny, info.max / 4, -info.max / 4, info.eps, 1e3, -1e3]
    return torch.tensor(values, dtype=torch.float64).to(dtype).to(device)


def transposed(shape, dtype, device, **domain):
    return make_tensor(shape[::-1], dtype, device, **domain).t()


def strided(shape, dtype, device, **domain):
    rows, cols = shape
    return make_tensor((rows, cols * 2), dtype, device, **domain)[:, ::2]


def unary_samples(out=None, inplace=None, grad=False, domain=None, extra=None):
    """Samples for ``call(x)``.

    out: the ``.out`` overload name, if the operator has one; inplace: (overload, call) for the
    in-place form; grad: check the gradient; domain: dict(low=, high=) for the random values;
    extra: more keyword arguments passed on every call.
    """
    domain = domain or {}
    kwargs = dict(extra or {})

    def samples(dtype, device, quick):
        shape = shape_for(quick)
        make = lambda s: make_tensor(s, dtype, device, **domain)
        cases = [
            Sample("contiguous", (make(shape),), kwargs),
            Sample("noncontiguous-transposed", (transposed(shape, dtype, device, **domain),), kwargs),
            Sample("noncontiguous-strided", (strided(shape, dtype, device, **domain),), kwargs),
            Sample("0d", (make(()),), kwargs),
            Sample("empty", (make((0, 5)),), kwargs),
            Sample("special-values", (special_values(dtype, device),), kwargs),
            Sample("3d", (make((3, 5, 7) if quick else (7, 129, 255)),), kwargs),
        ]
        if out:
            cases.append(Sample("out", (make(shape),), kwargs, expects=out, call=_with_out))
        if inplace:
            overload, call = inplace
            cases.append(Sample("inplace", (make(shape),), kwargs, expects=overload, call=call))
        if grad and dtype.is_floating_point:
            cases.append(Sample("grad", (make(shape).requires_grad_(),), kwargs, grad=True))
        return cases

    return samples


def binary_samples(out=None, inplace=None, grad=False, domain=None, rhs_domain=None, extra=None,
                   scalar=2.5, promote_with=torch.int32):
    """Samples for ``call(x, y)``; arguments as for :func:`unary_samples`.

    rhs_domain: values for the second operand (a divisor away from zero, say); scalar: the Python
    number used for the scalar-operand variant (None to skip); promote_with: the dtype of the
    second operand in the type-promotion variant (None to skip).
    """
    domain = domain or {}
    rhs_domain = rhs_domain or domain
    kwargs = dict(extra or {})

    def samples(dtype, device, quick):
        shape = shape_for(quick)
        rows, cols = shape
        lhs = lambda s: make_tensor(s, dtype, device, **domain)
        rhs = lambda s, d=dtype: make_tensor(s, d, device, **rhs_domain)
        specials = special_values(dtype, device)
        cases = [
            Sample("contiguous", (lhs(shape), rhs(shape)), kwargs),
            Sample("noncontiguous-transposed",
                   (transposed(shape, dtype, device, **domain), transposed(shape, dtype, device, **rhs_domain)),
                   kwargs),
            Sample("noncontiguous-strided", (strided(shape, dtype, device, **domain), rhs(shape)), kwargs),
            Sample("broadcast", (lhs((rows, 1)), rhs((1, cols))), kwargs),
            Sample("broadcast-row", (lhs(shape), rhs((cols,))), kwargs),
            Sample("0d", (lhs(()), rhs(())), kwargs),
            Sample("0d-with-tensor", (lhs(shape), rhs(())), kwargs),
            Sample("empty", (lhs((0, cols)), rhs((0, cols))), kwargs),
            Sample("special-values", (specials.repeat_interleave(len(specials)), specials.repeat(len(specials))),
                   kwargs),
        ]
        if scalar is not None:
            value = scalar if dtype.is_floating_point else (True if dtype == torch.bool else int(scalar))
            cases.append(Sample("scalar-operand", (lhs(shape), value), kwargs))
        if promote_with is not None and promote_with != dtype:
            cases.append(Sample("type-promotion", (lhs(shape), rhs(shape, promote_with)), kwargs))
        if out:
            cases.append(Sample("out", (lhs(shape), rhs(shape)), kwargs, expects=out, call=_with_out))
        if inplace:
            overload, call = inplace
            cases.append(Sample("inplace", (lhs(shape), rhs(shape)), kwargs, expects=overload, call=call))
        if grad and dtype.is_floating_point:
            cases.append(Sample("grad", (lhs(shape).requires_grad_(), rhs(shape).requires_grad_()), kwargs,
                                grad=True))
        return cases

    return samples


class _WithOut:
    """Marker call: the conformance runner calls the declaration's ``call`` with ``out=`` set."""

    def __repr__(self):
        return "with-out"


_with_out = _WithOut()


def is_out_call(call) -> bool:
    return call is _with_out
