"""Sample generators: every ``samples(dtype, device, quick)`` returns a list of :class:`Sample`.

The variants follow one vocabulary across operators: contiguous, noncontiguous-transposed,
noncontiguous-strided, broadcast, scalar-operand, 0d, empty, special-values, special-grad, subnormal,
type-promotion, out, inplace, grad, error-<dtype>-input. Quick mode (CI, the interpreter) uses small
shapes; full mode (a real device) larger.
"""

from __future__ import annotations

import math

import torch

from gems.spec import Sample

_CPU_DRAW_LIMIT = 1 << 22

# Odd sizes so that masks run; the full sizes cross several blocks and the 2^16 boundary.
QUICK_SHAPE = (13, 17)
FULL_SHAPE = (257, 1023)


def shape_for(quick: bool) -> tuple[int, int]:
    return QUICK_SHAPE if quick else FULL_SHAPE


def make_tensor(shape, dtype, device, low=-4.0, high=4.0, int_low=-100, int_high=100):
    """Random values in [low, high) for floats, in [int_low, int_high] for integers, coin flips for bool.

    Values come from the CPU generator, so a seed gives the same inputs on every device; perf-sized
    tensors (over 2^22 elements) are drawn on the device itself, which is seconds faster per tensor.
    On the meta device (used to list cases without data) only the shape and dtype are made.
    """
    if str(device) == "meta":
        return torch.empty(shape, dtype=dtype, device="meta")
    where = device if math.prod(shape) > _CPU_DRAW_LIMIT else "cpu"
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, device=where).bool().to(device)
    if not dtype.is_floating_point:
        info = torch.iinfo(dtype)
        lo, hi = max(int_low, info.min), min(int_high, info.max)
        return torch.randint(lo, hi + 1, shape, dtype=dtype, device=where).to(device)
    precise = torch.float64 if where == "cpu" else torch.float32
    values = torch.rand(shape, dtype=precise, device=where) * (high - low) + low
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


def subnormal_values(dtype, device):
    """Subnormal numbers of ``dtype`` (both signs): a device that flushes them to zero shows here."""
    info = torch.finfo(dtype)
    smallest = info.smallest_normal * info.eps  # the least positive subnormal
    values = [smallest, -smallest, info.smallest_normal / 2, -info.smallest_normal / 2,
              info.smallest_normal / 1024, -info.smallest_normal / 1024]
    return torch.tensor(values, dtype=torch.float64).to(dtype).to(device)


# Inputs of a dtype the operator refuses are listed once, under this dtype, as error variants.
REJECT_HOST_DTYPE = torch.float32


def _reject_samples(rejects, dtype, device, kwargs, operands=1, tail=()):
    if dtype != REJECT_HOST_DTYPE:
        return []
    return [Sample(f"error-{str(bad).replace('torch.', '')}-input",
                   (*(make_tensor((3, 4), bad, device) for _ in range(operands)), *tail), kwargs)
            for bad in rejects]


def _out_sample(out, args, kwargs):
    """out: an overload name (the declaration's ``call`` gets ``out=``), or (overload, call) where the call
    allocates its own out tensor (for Python entry points without ``out=``)."""
    overload, call = (out, _with_out) if isinstance(out, str) else out
    return Sample("out", args, kwargs, expects=overload, call=call)


def unary_samples(out=None, inplace=None, grad=False, domain=None, extra=None, grad_expects=None,
                  subnormals=True, rejects=(), more=None):
    """Samples for ``call(x)``.

    out: the ``.out`` overload name, if the operator has one, or (overload, call) when the call must
    allocate the out tensor itself; inplace: (overload, call) for the in-place form; grad: check the
    gradient; grad_expects: the overloads the grad sample must run through gems (a backward op);
    domain: dict(low=, high=, int_low=, int_high=) for the random values; extra: more keyword
    arguments passed on every call; subnormals: add a variant of subnormal inputs (floating dtypes);
    rejects: input dtypes ATen refuses for this operator (error variants, listed under float32);
    more(dtype, device, quick): operator-specific samples appended to the list.
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
        if subnormals and dtype.is_floating_point:
            cases.append(Sample("subnormal", (subnormal_values(dtype, device),), kwargs))
        if out:
            cases.append(_out_sample(out, (make(shape),), kwargs))
        if inplace:
            overload, call = inplace
            cases.append(Sample("inplace", (make(shape),), kwargs, expects=overload, call=call))
        if grad and dtype.is_floating_point:
            cases.append(Sample("grad", (make(shape).requires_grad_(),), kwargs, grad=True, expects=grad_expects))
        cases += _reject_samples(rejects, dtype, device, kwargs)
        if more is not None:
            cases += more(dtype, device, quick)
        return cases

    return samples


def backward_samples(grad_input=None, domain=None, grad_domain=None, extra=None, scalars=(), rejects=(),
                     more=None, broadcast=True):
    """Samples for a backward operator ``call(grad_output, x, *scalars)`` (x: the forward's input or
    output, as the operator takes it).

    grad_input: (overload, function) of the ``.grad_input`` form, called with ``grad_input=``;
    domain / grad_domain: values of x / grad_output; scalars: trailing positional numbers (a threshold);
    broadcast: add a variant where x broadcasts against grad_output; extra, rejects and more as for
    :func:`unary_samples`.
    """
    domain = domain or {}
    grad_domain = grad_domain or {}
    kwargs = dict(extra or {})
    scalars = tuple(scalars)

    def samples(dtype, device, quick):
        shape = shape_for(quick)
        rows, _ = shape
        shape_3d = (3, 5, 7) if quick else (7, 129, 255)
        xs = lambda s: make_tensor(s, dtype, device, **domain)
        gs = lambda s: make_tensor(s, dtype, device, **grad_domain)
        specials = special_values(dtype, device)
        cases = [
            Sample("contiguous", (gs(shape), xs(shape), *scalars), kwargs),
            Sample("noncontiguous-transposed", (transposed(shape, dtype, device, **grad_domain),
                                                transposed(shape, dtype, device, **domain), *scalars), kwargs),
            Sample("noncontiguous-strided", (gs(shape), strided(shape, dtype, device, **domain), *scalars), kwargs),
            Sample("0d", (gs(()), xs(()), *scalars), kwargs),
            Sample("empty", (gs((0, 5)), xs((0, 5)), *scalars), kwargs),
            Sample("3d", (gs(shape_3d), xs(shape_3d), *scalars), kwargs),
            Sample("special-values", (gs(specials.shape), specials, *scalars), kwargs),
            Sample("special-grad", (specials, xs(specials.shape), *scalars), kwargs),
        ]
        if broadcast:
            cases.append(Sample("broadcast", (gs(shape), xs((rows, 1)), *scalars), kwargs))
        if dtype.is_floating_point:
            subnormal = subnormal_values(dtype, device)
            cases.append(Sample("subnormal", (gs(subnormal.shape), subnormal, *scalars), kwargs))
        if grad_input:
            overload, fn = grad_input
            cases.append(Sample("out", (gs(shape), xs(shape), *scalars), kwargs, expects=overload,
                                call=_GradInputCall(fn)))
        cases += _reject_samples(rejects, dtype, device, kwargs, operands=2, tail=scalars)
        if more is not None:
            cases += more(dtype, device, quick)
        return cases

    return samples


class _GradInputCall:
    """Calls a ``.grad_input`` overload with a fresh empty ``grad_input`` of the gradient's dtype."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, grad_output, x, *scalars, **kwargs):
        grad_input = torch.empty(0, dtype=grad_output.dtype, device=grad_output.device)
        return self.fn(grad_output, x, *scalars, grad_input=grad_input, **kwargs)

    def __repr__(self):
        return f"grad_input-call({self.fn})"


def combined(*parts):
    """One generator from several: each part is a generator, or (suffix, generator) whose variant
    names get ``-suffix`` (gelu's "tanh" approximation beside its default, say)."""

    def samples(dtype, device, quick):
        cases = []
        for part in parts:
            suffix, generate = part if isinstance(part, tuple) else ("", part)
            for sample in generate(dtype, device, quick):
                if suffix:
                    sample.variant = f"{sample.variant}-{suffix}"
                cases.append(sample)
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
