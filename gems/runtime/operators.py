"""gems' own operators: a ``gems`` library namespace of torch operators (``torch.ops.gems.<name>``) for what ATen
has no overload for: gems.fused's fused operators (gems/ops/fused/api.py) and the backward passes of gems'
autograd Functions. As dispatcher operators they get the native layer's replay, as ATen overloads do
(docs/native.md, "gems' own operators").

Defining one is cheap (a schema and its default kernel: nothing compiled, no native layer loaded); its gems
implementation is registered on its first call (:func:`gems.runtime.registration.register_operator`), which
needs the vendor chosen.
"""

from __future__ import annotations

import torch

from gems.runtime import registration, selection
from gems.runtime.vendor import Autograd

NAMESPACE = "gems"
_LIBRARY = torch.library.Library(NAMESPACE, "DEF")


def define(name: str, schema: str, default, default_key: str):
    """The operator ``gems::<name>`` with ``schema`` ("(Tensor x, float eps) -> Tensor") and ``default`` as its
    kernel at ``default_key`` (CompositeImplicitAutograd: a composite of ATen ops; CompositeExplicitAutograd: the
    Python implementation itself, for every device and inside ``gems.aten_only()``)."""
    _LIBRARY.define(name + schema)
    _LIBRARY.impl(name, default, default_key)
    return getattr(getattr(torch.ops, NAMESPACE), name).default


def use_vendor(backend) -> None:
    """Set what registering for ``backend`` needs (registration's kernels_call_torch, native_layer, device_type):
    here, not in registration, which gems.native imports."""
    registration.kernels_call_torch = backend.capabilities.kernels_call_torch
    from gems import native  # not at import: it imports triton, whose mode the vendor sets first

    registration.native_layer, registration.device_type = native, backend.device


def function(overload: str, op, fn, autograd: Autograd, when_compiling=None):
    """A function that calls ``op``, having registered ``fn`` for it (counted under ``overload``) at the vendor's
    key (``autograd``: Autograd.enable for Autograd<key>) on its first call. ``when_compiling``: what runs instead
    while torch.compile traces (Dynamo cannot trace gems' Triton launches)."""
    registered = []
    operator = f"{NAMESPACE}::{op._schema.name.partition('::')[2]}"

    def call(*args, **kwargs):
        if when_compiling is not None and torch.compiler.is_compiling():
            return when_compiling(*args, **kwargs)
        if not registered:  # the first call: registering needs the vendor and loads the native layer
            backend = selection.current()
            use_vendor(backend)
            registration.register_operator(overload, operator, fn, backend.dispatch_key, autograd)
            registered.append(operator)
        return op(*args, **kwargs)

    call.operator = op
    return call


def backward(name: str, schema: str, fn):
    """A backward pass's kernels as the operator ``gems::<name>``, called from an autograd Function's backward:
    registered at the vendor's own key (a backward runs without building a graph), so the native layer replays
    it; ``fn`` also serves every other device and ``gems.aten_only()``. Counted under "gems::<name>", the name a
    dispatch mode (gems.trace, conformance's proof) sees it by."""
    op = define(name, schema, fn, "CompositeExplicitAutograd")
    return function(f"{NAMESPACE}::{name}", op, fn, Autograd.disable)
