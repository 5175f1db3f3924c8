"""What the unary math and activation operators share (acos, log, sign, elu, hardswish...): the
declaration of a one-operand operator with its ``name``, ``name_`` and ``name.out`` overloads, and
references to their sample generators in gems.testing.samples_unary (made on first use, so registering
operators loads no test code)."""

import torch

from gems.checks import check_out
from gems.codegen.pointwise import unary_overloads
from gems.dtypes import ALL
from gems.ops.pointwise.shared import combined, pointwise_perf, unary_samples
from gems.spec import OpSpec, lazy


def unary_spec(op, call, *, inplace=True, out=None, dtypes=ALL, grad=True, more=(), impls=None, perf_domain=None,
               **traits) -> OpSpec:
    """The declaration of the one-operand ``op`` (named after its ATen overloads): ``name``, ``name.out``
    and, with ``inplace`` (True, or the call of the in-place form), ``name_``, plus the overloads in
    ``impls``. Samples: the shared unary ones (``out``: the out sample's (overload, call) where ``call``
    takes no out=; ``traits``: domain, rejects, grad_expects...) and ``more`` generators (or (suffix,
    generator) pairs). Perf: pointwise on ``perf_domain`` (default: the samples' domain)."""
    name = op.name
    inplace_call = inplace if callable(inplace) else (
        (getattr(torch, f"{name}_", None) or getattr(torch.Tensor, f"{name}_")) if inplace else None)
    samples = unary_samples(out=out or f"{name}.out", inplace=(f"{name}_", inplace_call) if inplace else None,
                            grad=grad, **traits)
    return OpSpec(
        name=name, family="pointwise", impls={**unary_overloads(op, name, inplace=bool(inplace)), **(impls or {})},
        call=call, samples=combined(samples, *more) if more else samples, dtypes=dtypes,
        perf=pointwise_perf(1, domain=perf_domain or traits.get("domain")),
    )


def bool_out_overload(op) -> dict:
    """{name.out: f(self, out=)} of a test whose ATen kernel writes only a bool out= (isneginf, isposinf,
    signbit: "does not support non-boolean outputs"), where the generated out= would cast."""

    def out_overload(self, *, out):
        check_out(out, self, torch.bool)
        return op(self, out=out)

    return {f"{op.name}.out": out_overload}


def backward_overloads_with_numbers(op, name) -> dict:
    """{name: f(grad_output, x, *numbers), name.grad_input: the same into grad_input=}, the numbers (a bound,
    beta, lambd) passed to ``op`` as Python floats: one kernel specialization whatever their Python type."""

    def backward(grad_output, x, *numbers):
        return op(grad_output, x, *map(float, numbers))

    def with_grad_input(grad_output, x, *numbers, grad_input):
        return op(grad_output, x, *map(float, numbers), out=grad_input)

    return {name: backward, f"{name}.grad_input": with_grad_input}


def value_samples(values, **options):
    """gems.testing.samples_unary.value_samples: ``call(x)`` over fixed values (a domain's edges)."""
    return lazy("gems.testing.samples_unary", "value_samples", tuple(values), **options)


def alias_calls(*aliases, domain=None):
    """gems.testing.samples_unary.alias_calls: (variant, call, expects) of ATen's composite aliases."""
    return lazy("gems.testing.samples_unary", "alias_calls", *aliases, domain=domain)


def scalar_variants(*variants, domain=None, grad=False, expects=None):
    """gems.testing.samples_unary.scalar_variants: (variant, kwargs) calls with other numbers."""
    return lazy("gems.testing.samples_unary", "scalar_variants", *variants, domain=domain, grad=grad, expects=expects)


def error_calls(*errors, operands=1):
    """gems.testing.samples_unary.error_calls: (variant, call) of inputs ATen refuses."""
    return lazy("gems.testing.samples_unary", "error_calls", *errors, operands=operands)


def composite_samples(inplace, out, overloads):
    """gems.testing.samples_unary.composite_samples: a CompositeImplicitAutograd operator's calls, each
    expecting the overload of ``overloads`` (functional, in-place, out) its decomposition runs."""
    return lazy("gems.testing.samples_unary", "composite_samples", inplace, out, tuple(overloads))


def without_values(generator, values, operand=1, variants=("special-values",)):
    """gems.testing.samples_unary.without_values: ``generator`` with the special values where ATen's CPU kernel
    disagrees with itself (vectorized loop against scalar tail) left out."""
    return lazy("gems.testing.samples_unary", "without_values", generator, tuple(values), operand=operand,
                variants=variants)
