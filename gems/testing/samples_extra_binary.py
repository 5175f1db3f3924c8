"""Samples of the binary pointwise operators: :class:`BinaryTraits` and :class:`BinarySamples`
(:func:`binary_op_samples`), the comparisons, ATen aliases and their operands, divisors without
integer zeros, pairs of special values."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

import torch

from gems.spec import Sample
from gems.testing.samples import _with_out, make_tensor, shape_for, special_values, subnormal_values
from gems.testing.samples_edges import rounded_scalar_samples
from gems.testing.samples_extra_common import INPLACE_WIDER, WIDER, other_device, refused_out_dtype, strided_empty


def result_dtype(dtype: torch.dtype, result: str) -> torch.dtype:
    """The dtype an operator returns for ``dtype`` inputs: "same", "bool" or "float" (true division)."""
    if result == "bool":
        return torch.bool
    if result == "float" and not dtype.is_floating_point:
        return torch.get_default_dtype()
    return dtype


def nonzero_divisor(t: torch.Tensor, dividend: torch.Tensor | None = None) -> torch.Tensor:
    """``t`` with integer zeros replaced by one (divisors of integer division, which ATen's CPU
    kernels refuse), and -1 too where the dividend is the dtype's minimum (the quotient overflows:
    x86 traps, so ATen's CPU kernel kills the process); floating tensors are returned as they are."""
    if t.dtype.is_floating_point or t.dtype == torch.bool:
        return t
    bad = t == 0
    if dividend is not None and dividend.shape == t.shape and dividend.dtype == t.dtype and t.dtype.is_signed:
        bad = bad | ((dividend == torch.iinfo(t.dtype).min) & (t == -1))
    return torch.where(bad, torch.ones_like(t), t)


def _number(value, dtype):
    """``value`` as a Python number of ``dtype``'s kind (True for bool)."""
    return value if dtype.is_floating_point else (True if dtype == torch.bool else int(value))


# --------------------------------------------------------------------------- binary operators


@dataclass(frozen=True)
class BinaryTraits:
    """What a binary operator's operands and result are.

    domain / rhs_domain: values of the first / second operand (make_tensor's low, high, int_low, int_high);
    nonzero_rhs: the second operand is a divisor: every sample draws it without integer zeros (and
        without -1 beside the dtype's minimum);
    scalar: the Python number of the scalar-operand variant (None: no such variant);
    float_scalar: add "scalar-float-on-int" (an integer tensor and a float: type promotion);
    promote_with: the dtype of the second operand in the type-promotion variant (None: skip);
    result: "same", "bool" or "float": the result dtype for same-dtype inputs (out= variants);
    int_specials: the special-values pairs for integer dtypes too (integer division by the zeros among
        them has its own variant).
    """

    domain: dict = field(default_factory=dict)
    rhs_domain: dict | None = None
    nonzero_rhs: bool = False
    scalar: float | None = 2.5
    float_scalar: bool = True
    promote_with: torch.dtype | None = torch.int32
    result: str = "same"
    int_specials: bool = True


@dataclass(frozen=True)
class BinarySamples:
    """Samples for ``call(x, y)``: the shared variants (contiguous, strided, broadcast, 0-d, empty,
    special values, subnormals, scalar operand, type promotion, out=, in-place, grad) and the error
    variants (shapes that cannot broadcast, out= of a dtype or device ATen refuses, overlapping written
    tensors, in-place results that need a resize or a wider dtype).

    call: the torch function (``torch.sub``); traits: :class:`BinaryTraits`; out: its ``.out`` overload;
    inplace: (overload, call); scalar_overload: (overload, function(x, number)) reached only through
    ``torch.ops.aten``; scalar_expects: the overload that ``call(x, number)`` really runs when it is
    not the first declared; zero_division: (overload, function(x, y)) adds the "zero-divisor" variant,
    which raises on CPU (as ATen does there) and elsewhere checks the finite part (CUDA's quotient by
    zero is undefined, so it is masked out); grad: check the gradient; kwargs: keyword arguments
    passed on every call (rounding_mode, alpha...); prefix: put before every variant name;
    expects: the overload a sample runs when it names none (default: the declaration's first).
    """

    call: object
    traits: BinaryTraits = BinaryTraits()
    out: str | None = None
    inplace: tuple | None = None
    scalar_overload: tuple | None = None
    scalar_expects: str | None = None
    zero_division: tuple | None = None
    grad: bool = False
    kwargs: dict = field(default_factory=dict)
    prefix: str = ""
    expects: str | None = None

    def __call__(self, dtype, device, quick):
        t, call, kwargs = self.traits, self.call, dict(self.kwargs or {})
        domain = dict(t.domain or {})
        rhs_domain = dict(t.rhs_domain or domain)
        shape = shape_for(quick)
        rows, cols = shape
        square = (cols, cols)
        rdtype = result_dtype(dtype, t.result)
        lhs = lambda s, d=dtype: make_tensor(s, d, device, **domain)
        rhs = lambda s, d=dtype: make_tensor(s, d, device, **rhs_domain)

        def fn(*args, **kw):
            return call(*args, **kwargs, **kw)

        def divisor_safe(args):
            if not t.nonzero_rhs or len(args) < 2:
                return args
            x, y = args[0], args[1]
            if isinstance(y, torch.Tensor):
                y = nonzero_divisor(y, x if isinstance(x, torch.Tensor) else None)
            elif y == 0:
                y = 1
            return (x, y, *args[2:])

        cases = []

        def add(variant, build, kw=kwargs, expects=None, call=None, grad=False):
            cases.append(Sample(f"{self.prefix}{variant}", lambda: divisor_safe(tuple(build())), kw, call=call,
                                expects=expects or self.expects, grad=grad))

        def pair(a, b):
            return lambda: (lhs(a), rhs(b))

        add("contiguous", pair(shape, shape))
        add("noncontiguous-transposed", lambda: (lhs(shape[::-1]).t(), rhs(shape[::-1]).t()))
        add("noncontiguous-strided", lambda: (lhs((rows, cols * 2))[:, ::2], rhs(shape)))
        add("broadcast", pair((rows, 1), (1, cols)))
        add("broadcast-row", pair(shape, (cols,)))
        add("0d", pair((), ()))
        add("0d-with-tensor", pair(shape, ()))
        add("empty", pair((0, cols), (0, cols)))
        if t.int_specials or dtype.is_floating_point:
            add("special-values", lambda: specials_pair(dtype, device))
        if t.scalar is not None:
            add("scalar-operand", lambda: (lhs(shape), _number(t.scalar, dtype)), expects=self.scalar_expects)
        if t.promote_with is not None and t.promote_with != dtype:
            add("type-promotion", lambda: (lhs(shape), rhs(shape, t.promote_with)))
        if self.out:
            add("out", pair(shape, shape), expects=self.out, call=_with_out)
        if self.inplace:
            overload, inplace_call = self.inplace
            add("inplace", pair(shape, shape), expects=overload, call=inplace_call)
        if self.grad and dtype.is_floating_point:
            add("grad", lambda: (lhs(shape).requires_grad_(), rhs(shape).requires_grad_()), grad=True)
        add("broadcast-error", pair((3, 4), (5,)))
        if dtype.is_floating_point:
            # Subnormal operands (and results): a device that flushes them to zero shows here.
            add("subnormal", lambda: _subnormal_pairs(dtype, device))
        if not dtype.is_floating_point and dtype != torch.bool and t.float_scalar:
            add("scalar-float-on-int", lambda: (lhs(shape), 2.5), expects=self.scalar_expects)
        if self.scalar_overload is not None:
            overload, scalar_call = self.scalar_overload
            add("scalar-overload", lambda: (lhs(shape), _number(t.scalar, dtype)), expects=overload,
                call=lambda x, s, **kw: scalar_call(x, s, **kw))
        if self.out:
            out = self.out
            add("out-noncontiguous", lambda: (lhs(shape), rhs(shape), strided_empty(shape, rdtype, device)), {},
                expects=out, call=lambda x, y, o: fn(x, y, out=o))
            add("out-resize", lambda: (lhs(shape), rhs(shape), torch.empty((3,), dtype=rdtype, device=device)), {},
                expects=out, call=lambda x, y, o: fn(x, y, out=o))
            add("out-wrong-device", pair(shape, shape), {},
                call=lambda x, y: fn(x, y, out=torch.empty(0, dtype=rdtype, device=other_device(x.device))))
            add("out-overlap-error", pair(square, square), {}, call=lambda x, y: fn(x, y, out=x.t()))
            add("out-expanded-error", pair(shape, shape), {},
                call=lambda x, y: fn(x, y, out=torch.empty((1, y.shape[1]), dtype=rdtype,
                                                           device=y.device).expand(y.shape)))
            out_wider = WIDER.get(rdtype)
            if out_wider is not None:
                add("out-wider-dtype", lambda: (lhs(shape), rhs(shape), torch.empty(0, dtype=out_wider, device=device)),
                    {}, expects=out, call=lambda x, y, o: fn(x, y, out=o))
            refused = refused_out_dtype(rdtype)
            if refused is not None:
                add("out-wrong-dtype", pair(shape, shape), {},
                    call=lambda x, y: fn(x, y, out=torch.empty(0, dtype=refused, device=x.device)))
        if self.inplace:
            overload, inplace_call = self.inplace
            add("inplace-broadcast-error", pair((1, cols), shape), call=inplace_call)
            add("inplace-self-alias", lambda: (nonzero_divisor(lhs(shape)) if t.nonzero_rhs else lhs(shape),),
                expects=overload,
                call=lambda x, **kw: inplace_call(x, x, **kw))
            add("inplace-overlap-error", lambda: (lhs(square),), call=lambda x, **kw: inplace_call(x, x.t(), **kw))
            add("inplace-expanded-error", pair((1, cols), shape),
                call=lambda x, y, **kw: inplace_call(x.expand(y.shape), y, **kw))
            inplace_wider = INPLACE_WIDER.get(dtype)
            if inplace_wider is not None:
                # The result is computed in the wider dtype and stored in self's, as ATen does.
                add("inplace-promoted", lambda: (lhs(shape), rhs(shape, inplace_wider)), expects=overload,
                    call=inplace_call)
            if not dtype.is_floating_point:
                # (an error where the result cannot be cast to self's dtype; logical_and_ writes 0/1 into any dtype)
                add("inplace-promotion-error", lambda: (lhs(shape), rhs(shape, torch.float32)), expects=overload,
                    call=inplace_call)
        if self.zero_division is not None and not dtype.is_floating_point and dtype != torch.bool:
            cases.append(_zero_division_sample(self.prefix, self.expects, self.zero_division, pair(shape, shape),
                                               device, kwargs))
        return cases


_TRAITS = {f.name for f in fields(BinaryTraits)}


def binary_op_samples(call, **options) -> BinarySamples:
    """:class:`BinarySamples` from keyword arguments: those naming a :class:`BinaryTraits` field go to the
    traits record, the others to the samples record (``binary_op_samples(torch.fmax, out="fmax.out",
    scalar=None)``)."""
    traits = {k: v for k, v in options.items() if k in _TRAITS}
    rest = {k: v for k, v in options.items() if k not in _TRAITS}
    return BinarySamples(call, BinaryTraits(**traits), **rest)


def _subnormal_pairs(dtype, device):
    tiny = subnormal_values(dtype, device)
    values = torch.cat([tiny, torch.tensor([0.5, -3.0], dtype=dtype, device=device)])
    return values.repeat_interleave(len(values)), values.repeat(len(values))


def _zero_division_sample(prefix, default_expects, zero_division, pair, device, kwargs):
    overload, divide = zero_division

    def build():
        x, y = pair()
        y.view(-1)[::3] = 0
        return x, y

    if str(device) in ("cpu", "meta"):
        return Sample(f"{prefix}zero-divisor", build, kwargs, expects=overload or default_expects, call=divide)

    def masked(x, y, **kw):
        if x.is_cpu:  # the oracle: ATen's CPU kernel would raise, so divide by one where y is zero
            result = divide(x, nonzero_divisor(y), **kw)
        else:
            result = divide(x, y, **kw)
        return torch.where(y == 0, torch.zeros_like(result), result)

    return Sample(f"{prefix}zero-divisor", build, kwargs, expects=overload or default_expects, call=masked)


def comparison_samples(name, call, out_overloads):
    """Samples for ``eq``-like comparisons: binary variants, ties, NaN, scalar overloads, out=."""
    tensor_out, scalar_out = out_overloads
    base = binary_op_samples(call, out=tensor_out, scalar_overload=(f"{name}.Scalar", getattr(torch.ops.aten,
                                                                                             name).Scalar),
                             scalar_expects=f"{name}.Scalar", result="bool")

    def samples(dtype, device, quick):
        shape = shape_for(quick)
        make = lambda d=dtype: make_tensor(shape, d, device)

        def ties():
            x, y, pick = make(), make(), make(torch.bool)
            return x, torch.where(pick, x, y)  # half the pairs equal, so that eq/le/ge see ties

        cases = base(dtype, device, quick) + [
            Sample("ties", ties),
            Sample("scalar-out", lambda: (make(), 2 if not dtype.is_floating_point else 0.5,
                                          torch.empty(0, dtype=torch.bool, device=device)),
                   expects=scalar_out, call=lambda a, s, o: call(a, s, out=o)),
        ]
        if dtype.is_floating_point:
            cases.append(Sample("nan-scalar-tensor",
                                lambda: (make(), torch.tensor(float("nan"), dtype=dtype, device=device))))
        if dtype == torch.uint8:
            # A negative scalar wraps to uint8 before comparing, as in ATen.
            cases.append(Sample("scalar-out-of-range", lambda: (make(), -1), expects=f"{name}.Scalar"))
        return cases + rounded(dtype, device, quick)

    # A Python float that rounds to an element of the tensor: ATen compares with the rounded number.
    rounded = rounded_scalar_samples(call, expects=f"{name}.Scalar")
    return samples


def alias_samples(samples_fn, aliases):
    """Add variants that call ATen aliases (decomposed before the backend key), each expecting the
    overload that really runs. aliases: [(variant, call, expects, make_args(dtype, device, quick))];
    make_args returns (args, {}) and runs only when the case runs (keyword arguments go in the call)."""

    def samples(dtype, device, quick):
        cases = samples_fn(dtype, device, quick)
        for variant, call, expects, make_args in aliases:
            cases.append(Sample(variant, lambda make_args=make_args: _alias_args(make_args(dtype, device, quick)),
                                call=call, expects=expects))
        return cases

    return samples


def _alias_args(made):
    args, kwargs = made
    if kwargs:
        raise ValueError("alias_samples: make_args must return no keyword arguments; pass them in the call")
    return args


def two_tensors(domain=None, rhs_domain=None, nonzero=False):
    """make_args for :func:`alias_samples`: two random tensors of the case's shape."""
    domain = domain or {}
    rhs_domain = rhs_domain or domain

    def make(dtype, device, quick):
        shape = shape_for(quick)
        x = make_tensor(shape, dtype, device, **domain)
        y = make_tensor(shape, dtype, device, **rhs_domain)
        return (x, nonzero_divisor(y, x) if nonzero else y), {}

    return make


def tensor_and_scalar(value, domain=None):
    domain = domain or {}

    def make(dtype, device, quick):
        return (make_tensor(shape_for(quick), dtype, device, **domain), _number(value, dtype)), {}

    return make


def one_tensor(dtype=None):
    """make_args for :func:`alias_samples`: one random tensor of the case's shape (of ``dtype`` if given)."""

    def make(case_dtype, device, quick):
        return (make_tensor(shape_for(quick), dtype or case_dtype, device),), {}

    return make


def specials_pair(dtype, device):
    """Every pair of special values of ``dtype`` (NaN, infinities, signed zeros, extremes...)."""
    specials = special_values(dtype, device)
    return specials.repeat_interleave(len(specials)), specials.repeat(len(specials))
