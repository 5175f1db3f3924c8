"""Sample generators: every ``samples(dtype, device, quick)`` returns a list of :class:`Sample`.

The variants follow one vocabulary across operators: contiguous, noncontiguous-transposed,
noncontiguous-strided, broadcast, scalar-operand, 0d, empty, special-values, special-grad, subnormal,
type-promotion, out, inplace, grad, error-<dtype>-input. Quick mode (CI, the interpreter) uses small
shapes; full mode (a real device) larger.

Generators are lazy: each :class:`Sample` carries a builder (``args=lambda: (...)``) and only the case
that runs calls it, under its own seed, so listing an operator's variants makes no tensors. A family's
behaviour is a small frozen record (:class:`UnarySamples`, :class:`BackwardSamples`; the binary one in
gems.testing.samples_extra_binary) whose fields say what the operator takes; the record is the generator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

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
                   lambda bad=bad: (*(make_tensor((3, 4), bad, device) for _ in range(operands)), *tail), kwargs)
            for bad in rejects]


def _out_sample(out, args, kwargs):
    """out: an overload name (the declaration's ``call`` gets ``out=``), or (overload, call) where the call
    allocates its own out tensor (for Python entry points without ``out=``)."""
    overload, call = (out, _with_out) if isinstance(out, str) else out
    return Sample("out", args, kwargs, expects=overload, call=call)


def _3d(quick):
    return (3, 5, 7) if quick else (7, 129, 255)


@dataclass(frozen=True)
class UnarySamples:
    """Samples for ``call(x)``: the record of what a one-operand operator takes is its generator.

    out: the ``.out`` overload name, if the operator has one, or (overload, call) when the call must
    allocate the out tensor itself; inplace: (overload, call) for the in-place form; grad: check the
    gradient; grad_expects: the overloads the grad sample must run through gems (a backward op);
    domain: dict(low=, high=, int_low=, int_high=) for the random values; extra: more keyword
    arguments passed on every call; subnormals: add a variant of subnormal inputs (floating dtypes);
    rejects: input dtypes ATen refuses for this operator (error variants, listed under float32);
    more(dtype, device, quick): operator-specific (lazy) samples appended to the list.
    """

    out: str | tuple | None = None
    inplace: tuple | None = None
    grad: bool = False
    domain: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)
    grad_expects: tuple | str | None = None
    subnormals: bool = True
    rejects: tuple = ()
    more: object = None

    def __call__(self, dtype, device, quick):
        shape = shape_for(quick)
        kwargs, domain = dict(self.extra or {}), dict(self.domain or {})

        def one(s):
            return lambda: (make_tensor(s, dtype, device, **domain),)

        cases = [
            Sample("contiguous", one(shape), kwargs),
            Sample("noncontiguous-transposed", lambda: (transposed(shape, dtype, device, **domain),), kwargs),
            Sample("noncontiguous-strided", lambda: (strided(shape, dtype, device, **domain),), kwargs),
            Sample("0d", one(()), kwargs),
            Sample("empty", one((0, 5)), kwargs),
            Sample("special-values", lambda: (special_values(dtype, device),), kwargs),
            Sample("3d", one(_3d(quick)), kwargs),
        ]
        if self.subnormals and dtype.is_floating_point:
            cases.append(Sample("subnormal", lambda: (subnormal_values(dtype, device),), kwargs))
        if self.out:
            cases.append(_out_sample(self.out, one(shape), kwargs))
        if self.inplace:
            overload, call = self.inplace
            cases.append(Sample("inplace", one(shape), kwargs, expects=overload, call=call))
        if self.grad and dtype.is_floating_point:
            cases.append(Sample("grad", lambda: (make_tensor(shape, dtype, device, **domain).requires_grad_(),),
                                kwargs, grad=True, expects=self.grad_expects))
        cases += _reject_samples(self.rejects, dtype, device, kwargs)
        if self.more is not None:
            cases += self.more(dtype, device, quick)
        return cases


unary_samples = UnarySamples  # the name declarations use: ``samples=unary_samples(out="abs.out")``


@dataclass(frozen=True)
class BackwardSamples:
    """Samples for a backward operator ``call(grad_output, x, *scalars)`` (x: the forward's input or
    output, as the operator takes it).

    grad_input: (overload, function) of the ``.grad_input`` form, called with ``grad_input=``;
    domain / grad_domain: values of x / grad_output; scalars: trailing positional numbers (a threshold);
    broadcast: add a variant where x broadcasts against grad_output; extra, rejects and more as for
    :class:`UnarySamples`.
    """

    grad_input: tuple | None = None
    domain: dict = field(default_factory=dict)
    grad_domain: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)
    scalars: tuple = ()
    rejects: tuple = ()
    more: object = None
    broadcast: bool = True

    def __call__(self, dtype, device, quick):
        shape = shape_for(quick)
        rows, _ = shape
        kwargs, scalars = dict(self.extra or {}), tuple(self.scalars)
        domain, grad_domain = dict(self.domain or {}), dict(self.grad_domain or {})
        xs = lambda s: make_tensor(s, dtype, device, **domain)
        gs = lambda s: make_tensor(s, dtype, device, **grad_domain)

        def pair(g_shape, x_shape):
            return lambda: (gs(g_shape), xs(x_shape), *scalars)

        def specials(grad_side):
            def build():
                values = special_values(dtype, device)
                return (values, xs(values.shape), *scalars) if grad_side else (gs(values.shape), values, *scalars)
            return build

        def subnormal():
            values = subnormal_values(dtype, device)
            return gs(values.shape), values, *scalars

        cases = [
            Sample("contiguous", pair(shape, shape), kwargs),
            Sample("noncontiguous-transposed", lambda: (transposed(shape, dtype, device, **grad_domain),
                                                        transposed(shape, dtype, device, **domain), *scalars), kwargs),
            Sample("noncontiguous-strided", lambda: (gs(shape), strided(shape, dtype, device, **domain), *scalars),
                   kwargs),
            Sample("0d", pair((), ()), kwargs),
            Sample("empty", pair((0, 5), (0, 5)), kwargs),
            Sample("3d", pair(_3d(quick), _3d(quick)), kwargs),
            Sample("special-values", specials(False), kwargs),
            Sample("special-grad", specials(True), kwargs),
        ]
        if self.broadcast:
            cases.append(Sample("broadcast", pair(shape, (rows, 1)), kwargs))
        if dtype.is_floating_point:
            cases.append(Sample("subnormal", subnormal, kwargs))
        if self.grad_input:
            overload, fn = self.grad_input
            cases.append(Sample("out", pair(shape, shape), kwargs, expects=overload, call=_GradInputCall(fn)))
        cases += _reject_samples(self.rejects, dtype, device, kwargs, operands=2, tail=scalars)
        if self.more is not None:
            cases += self.more(dtype, device, quick)
        return cases


backward_samples = BackwardSamples


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
            cases += [replace(s, variant=f"{s.variant}-{suffix}") if suffix else s
                      for s in generate(dtype, device, quick)]
        return cases

    return samples


class _WithOut:
    """Marker call: the conformance runner calls the declaration's ``call`` with ``out=`` set."""

    def __repr__(self):
        return "with-out"


_with_out = _WithOut()


def is_out_call(call) -> bool:
    return call is _with_out
