"""gems: Triton kernels for ATen operators, registered into PyTorch's dispatcher.

    import gems
    gems.enable()               # every declared operator, for the selected vendor's device
    with gems.use_gems(include=["add", "softmax"]):
        ...                     # plain torch code runs gems kernels here
    gems.disable()

Importing gems selects nothing and compiles nothing; the vendor is chosen on first use
(``select_vendor``, else ``GEMS_VENDOR``, else detection, else the CPU interpreter). The first
registration loads the native dispatch layer (built once into the gems cache; docs/native.md);
``native_status()`` says whether it serves calls.
"""

from __future__ import annotations

import contextlib

from gems.runtime import operators, registration, selection
from gems.runtime.registration import Fallback, aten_only, registered_ops
from gems.runtime.vendor import Autograd, Capabilities, VendorError, VendorInfoBase
from gems.tracing import trace

__all__ = [
    "Autograd", "Capabilities", "Fallback", "VendorError", "VendorInfoBase", "aten_only", "call_counts",
    "disable", "enable", "native_status", "registered_ops", "reset_counts", "select_vendor", "trace", "use_gems",
    "vendor",
]
__version__ = "0.1.0"


def select_vendor(name: str):
    """Choose the vendor for this process (before any operator is used)."""
    return selection.select(name, why="gems.select_vendor()")


def vendor():
    """The active vendor backend (chosen on first call)."""
    return selection.current()


def _matches(overload: str, owner: str, names) -> bool:
    base = overload.split(".")[0]
    return overload in names or base in names or owner in names


def _names(value) -> list[str]:
    """Operator or overload names: a list, or one name as a string ("softmax", not its letters)."""
    return [value] if isinstance(value, str) else list(value or ())


def _implementation_table(include=None, exclude=None, unused=None) -> dict:
    """overload -> (function, Autograd, owner) after vendor overrides, unused ops and filters."""
    from gems import ops

    backend = selection.current()
    own_backward = {overload for spec in ops.all_specs() for overload in spec.autograd_enabled}
    table = {overload: (fn, Autograd.enable if overload in own_backward else Autograd.disable, owner)
             for overload, (fn, owner) in ops.implementations().items()}
    for overload, (fn, autograd) in backend.specific_ops().items():
        owner = table[overload][2] if overload in table else None
        table[overload] = (fn, autograd, owner)
    skipped = set(backend.unused_ops()) | set(_names(unused))
    include, exclude = set(_names(include)), set(_names(exclude))
    unknown = (include | exclude) - {n for o, (_, _, owner) in table.items() for n in (o, o.split(".")[0], owner)}
    if unknown:
        raise ValueError(f"unknown operator(s) {sorted(unknown)}; see gems.ops.names() for the declared ones")
    return {
        overload: entry for overload, entry in table.items()
        if not _matches(overload, entry[2], skipped)
        and (not include or _matches(overload, entry[2], include))
        and not _matches(overload, entry[2], exclude)
    }


def enable(unused=None, include=None, exclude=None) -> list[str]:
    """Register gems kernels for the vendor's dispatch key; returns the overloads registered now.

    unused / exclude: operator or overload names left to ATen; include: register only these.
    """
    backend = selection.current()
    operators.use_vendor(backend)
    table = _implementation_table(include, exclude, unused)
    registration.apply(table, backend.dispatch_key)
    return registered_ops()


def disable() -> None:
    """Give every overload back to ATen."""
    registration.apply({}, None)


@contextlib.contextmanager
def use_gems(include=None, exclude=None):
    """Run the block with gems registered (only ``include``, minus ``exclude``), then restore."""
    previous = registration.snapshot()
    enable(include=include, exclude=exclude)
    try:
        yield
    finally:
        registration.apply(previous, selection.current().dispatch_key)


def __getattr__(name):
    # gems.fused (the fused-operator API) loads on first use: importing it defines kernels, which needs
    # the vendor chosen, and ``import gems`` chooses nothing. gems.patch (callable: gems.patch(model)) and
    # its unpatch / patch_class load on first use too.
    import importlib

    if name in ("fused", "patch"):
        return importlib.import_module(f"gems.{name}")
    if name in ("unpatch", "patch_class", "unpatch_class"):
        return getattr(importlib.import_module("gems.patch"), name)
    raise AttributeError(f"module 'gems' has no attribute {name!r}")


def call_counts() -> dict:
    """{'gems': {overload: calls}, 'fallback': {(overload, reason): calls}} since the last reset."""
    return {"gems": dict(registration.gems_calls), "fallback": dict(registration.fallback_calls)}


def reset_counts() -> None:
    registration.reset_counts()


def native_status() -> dict:
    """Whether the native dispatch layer serves calls: {'active', 'reason' (why not), 'primitive',
    'build_seconds', 'build_dir'}. It loads when gems first registers an operator."""
    from gems import native

    return native.status()
