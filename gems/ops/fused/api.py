"""What every ``gems.fused`` function shares: its calls are counted in ``gems.call_counts()`` under its
API name (``gems.fused.silu_and_mul``), as registered ATen overloads are, so conformance and perf can
prove the gems kernel ran; an input the kernel does not handle runs the eager PyTorch composite
instead, counted as a fallback with its reason.

A function declared with a ``schema`` is an operator of gems' own library namespace
(``torch.ops.gems.silu_and_mul``): its composite is the operator's CompositeImplicitAutograd kernel, and
its gems implementation is registered at the vendor's Autograd key on the first call, as an ATen overload
with ``Autograd.enable`` is (gems/runtime/operators.py). So the native layer
serves it too: a call replays its recorded launches from C++ after the first call of its signature
(docs/native.md, "gems' own operators"); one that needs an autograd graph gets its node built in C++ from the
declaration beside its autograd Function (gems/runtime/native_backward.py). Without a schema
(linear_cross_entropy) the function stays a Python API: every call takes the Python path.

A function declared ``differentiable`` brings its own backward (a ``torch.autograd.Function`` whose
forward and backward launch gems kernels), so inputs that require grad run the kernels too. The others
have no backward: where autograd would need one (grad enabled and an input that requires grad) the
composite runs, so training stays correct. Under torch.compile the composite is what gets traced
(Dynamo cannot trace a Triton launch of gems' own): the compiler fuses it with its own kernels.
"""

from __future__ import annotations

import functools

import torch

from gems.runtime import operators, registration, selection
from gems.runtime.registration import Fallback
from gems.runtime.vendor import Autograd


def _tensors(args, kwargs) -> list:
    return [a for a in (*args, *kwargs.values()) if isinstance(a, torch.Tensor)]


def _check_handled(tensors, differentiable: bool) -> None:
    device = selection.current().device
    if any(t.device.type != device for t in tensors):
        raise Fallback(f"tensors not on the vendor's device type {device!r}")
    if not differentiable and torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
        raise Fallback("an input requires grad and this gems.fused kernel has no backward: the eager composite runs")


def needs_grad(*tensors) -> bool:
    """Whether autograd will want gradients of any of ``tensors`` (None entries are skipped)."""
    return torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in tensors)


def api_function(name: str, impl, reference, differentiable: bool = False, schema: str | None = None):
    """The public function ``name``: ``impl`` (the gems kernel's launcher), else ``reference``. ``schema``: the
    operator's arguments and returns in torch.library's syntax, ``"(Tensor x, Tensor? up=None) -> Tensor"``, whose
    defaults are ``impl``'s and ``reference``'s."""
    short = name.rpartition(".")[2]

    @functools.wraps(impl)
    def checked(*args, **kwargs):
        _check_handled(_tensors(args, kwargs), differentiable)
        return impl(*args, **kwargs)

    if schema is None:
        return _python_function(name, short, checked, reference)
    op = operators.define(short, schema, reference, "CompositeImplicitAutograd")
    call = functools.wraps(impl)(operators.function(name, op, checked, Autograd.enable, when_compiling=reference))
    call.__name__ = call.__qualname__ = short
    return call


def _python_function(name: str, short: str, checked, reference):
    """A fused function that is no operator: each call runs ``checked`` in Python (or ``reference``)."""
    calls = registration.gems_calls.cell(name)

    @functools.wraps(checked)
    def call(*args, **kwargs):
        if torch.compiler.is_compiling():
            return reference(*args, **kwargs)
        try:
            out = checked(*args, **kwargs)
        except Fallback as why:
            registration.fallback_calls[name, str(why)] += 1
            return reference(*args, **kwargs)
        calls[0] += 1
        return out

    call.__name__ = call.__qualname__ = short
    return call
