"""The backward contract of gems' autograd Functions, as data: what the native layer's C++ autograd node
(gems/native/autograd_node.cpp) needs to replay a training-mode call without Python.

A Function whose ``backward`` is one call of a registered backward operator declares that call beside it::

    @native_backward("gems::gated_backward", args=(Grad(0), Saved(0), Saved(1), Attr("act")),
                     grads=(Result(0), Result(1), None))
    class _Gated(torch.autograd.Function): ...

- ``args``: the operator's arguments in schema order (trailing ones with defaults may be left out): ``Grad(j)``
  (the gradient of forward output j; an undefined one is None for a ``Tensor?`` argument, zeros of the output's
  shape for a ``Tensor`` one, as autograd materializes it for a Python Function), ``Saved(i)`` (the i-th tensor
  given to ``ctx.save_for_backward``, or None), ``Attr(name)`` (a number or bool set on ctx by forward),
  ``NeedsGrad(p, ...)`` (whether any of the forward's inputs at positions p needs a gradient),
  ``Choose(attr, if_true, if_false)``, or a constant (bool, int, float, None);
- ``grads``: per argument of ``forward`` after ctx, ``Result(k)`` (the operator's k-th result, viewed to that
  input's shape) or None; a gradient is dropped where the input needs none;
- ``undefined``: {output j: grads}: when output j's gradient is undefined (``ctx.set_materialize_grads(False)``),
  the input gradients are these instead (``Grad(m)`` or None), and the operator is not called.

Everything but the tensors is resolved when a call is recorded (it depends only on the call's key: dtypes,
shapes, which inputs require grad), so the node stores constants. The backward is once differentiable, as the
Python ``backward`` (``@once_differentiable``) is. The declaration is checked here, at import: the operator, its
schema's arguments and results, and ``grads`` against ``forward``'s parameters; a Function without one keeps its
training calls on the Python path (docs/native.md, "Autograd-level operators").
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import torch

from gems.runtime import registration


@dataclass(frozen=True)
class Grad:
    output: int


@dataclass(frozen=True)
class Saved:
    index: int


@dataclass(frozen=True)
class Attr:
    name: str


@dataclass(frozen=True)
class NeedsGrad:
    positions: tuple

    def __init__(self, *positions: int):
        object.__setattr__(self, "positions", positions)


@dataclass(frozen=True)
class Choose:
    attr: str
    if_true: object
    if_false: object


@dataclass(frozen=True)
class Result:
    index: int


@dataclass(frozen=True)
class Declaration:
    operator: str  # "gems::row_norm_backward" (its default overload)
    args: tuple
    grads: tuple
    undefined: dict


_CONSTANTS = (bool, int, float, type(None))


def native_backward(operator: str, args: tuple, grads: tuple, undefined: dict | None = None):
    """Class decorator: declare ``cls``'s backward as one call of ``operator`` (module docstring); raises
    ValueError naming what is wrong. Also lets a recording see the Function's inputs (its ``apply``)."""
    def decorate(cls):
        declaration = Declaration(operator, tuple(args), tuple(grads), dict(undefined or {}))
        _check(cls, declaration)
        cls.native_backward = declaration
        apply = cls.apply

        def recorded_apply(*inputs):
            if registration.recording is not None:  # the native layer records this call: it maps inputs to edges
                registration.recording.applied.append((cls, inputs))
            return apply(*inputs)

        recorded_apply.__wrapped__ = apply
        cls.apply = staticmethod(recorded_apply)
        return cls

    return decorate


def _check(cls, d: Declaration) -> None:
    where = f"{cls.__name__}'s native_backward"
    namespace, _, name = d.operator.partition("::")
    try:
        schema = getattr(getattr(torch.ops, namespace), name).default._schema
    except (AttributeError, RuntimeError) as exc:
        raise ValueError(f"{where}: no operator {d.operator!r} (define it before the Function)") from exc
    params = list(inspect.signature(cls.forward).parameters)[1:]  # after ctx
    problems = []
    if len(d.args) > len(schema.arguments):
        problems.append(f"{len(d.args)} args for {len(schema.arguments)} schema arguments")
    problems += [f"argument {a.name} has no default and is not given" for a in schema.arguments[len(d.args):]
                 if not a.has_default_value()]
    if len(d.grads) != len(params):
        problems.append(f"{len(d.grads)} grads for forward's {len(params)} inputs {params}")
    for i, a in enumerate(d.args):
        kind = str(schema.arguments[i].type) if i < len(schema.arguments) else "?"
        for leaf in _leaves(a):
            if isinstance(leaf, (Grad, Saved)) and "Tensor" not in kind:
                problems.append(f"argument {i} ({kind}) is given a tensor ({leaf})")
            elif isinstance(leaf, NeedsGrad) and any(p >= len(params) for p in leaf.positions):
                problems.append(f"argument {i}: {leaf} names no input of forward")
            elif not isinstance(leaf, (Grad, Saved, Attr, NeedsGrad, *_CONSTANTS)):
                problems.append(f"argument {i} is {leaf!r}: not a Grad, Saved, Attr, NeedsGrad, Choose or constant")
    results = len(schema.returns)
    problems += [f"grads[{p}] is {g!r}: not a Result below {results} or None" for p, g in enumerate(d.grads)
                 if g is not None and not (isinstance(g, Result) and g.index < results)]
    for j, alternative in d.undefined.items():
        if len(alternative) != len(params) or not all(g is None or isinstance(g, Grad) for g in alternative):
            problems.append(f"undefined[{j}] must give a Grad or None for each of forward's {len(params)} inputs")
    if problems:
        raise ValueError(f"{where} ({d.operator}): " + "; ".join(problems))


def _leaves(value):
    if isinstance(value, Choose):
        return [*_leaves(value.if_true), *_leaves(value.if_false)]
    return [value]


def resolve(value, ctx):
    """A declared argument with everything but tensors resolved against ``ctx`` (the recorded call's node):
    ("g", j), ("s", i), or ("c", a bool, int, float or None)."""
    if isinstance(value, Choose):
        return resolve(value.if_true if _attr(ctx, value.attr) else value.if_false, ctx)
    if isinstance(value, Grad):
        return ("g", value.output)
    if isinstance(value, Saved):
        return ("s", value.index)
    if isinstance(value, Attr):
        return ("c", _attr(ctx, value.name))
    if isinstance(value, NeedsGrad):
        return ("c", any(ctx.needs_input_grad[p] for p in value.positions))
    return ("c", value)


def _attr(ctx, name):
    value = getattr(ctx, name)
    if not isinstance(value, _CONSTANTS):
        raise TypeError(f"ctx.{name} is a {type(value).__name__}: a native backward takes bools and numbers only")
    return value
