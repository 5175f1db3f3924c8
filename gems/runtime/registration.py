"""Registering gems implementations into PyTorch's ATen dispatcher, and counting what ran.

Every registered call goes through a small wrapper that counts it. An implementation that meets an
input it does not handle raises :class:`Fallback` before doing any work; the wrapper then runs ATen's
own kernel for that call and counts the fallback with its reason, so tests and reports can see it.

Registered overloads go through the native layer (gems/native) when it is available: a C++ kernel that
replays known call signatures and hands the others to the same wrapper; at Autograd<key> (an overload with
its own backward) it replays calls that need no autograd graph, and those that need one when the implementation's
autograd Function declares its backward (gems/runtime/native_backward.py: the node is then built in C++). Calls it
replays count in
``gems_calls`` too.

gems' own operators (gems.fused's, and backward passes: the ``gems`` library namespace of
gems/runtime/operators.py) are registered the same way by :func:`register_operator`, outside gems.enable()'s
table, and counted under the name they are given ("gems.fused.skip_layer_norm", "gems::row_norm_backward").
"""

from __future__ import annotations

import contextlib
import functools
import warnings
from collections import Counter
from collections.abc import Mapping

import torch
from torch.utils._python_dispatch import _disable_current_modes

from gems.runtime.vendor import Autograd

# Set from the vendor's capabilities: Python-emulated kernels call torch ops themselves.
kernels_call_torch = False
# The gems.native.record.Recording of the call being recorded, if any: launch.Launcher reports to it.
recording = None
# A tensor attribute: a kernel argument that no launch reads or writes (a placeholder kept for the process),
# which the native layer records as a constant pointer instead of a buffer to allocate per replay.
NEVER_READ = "_gems_never_read"
# A tensor attribute: a device table whose words follow from the call's signature alone (its sizes), never written
# after its upload: the native layer records it as a constant pointer too (the plan keeps the table alive).
KEY_TABLE = "_gems_key_table"
_aten_only_depth = 0
# Set by gems.testing.proof while a conformance case records, else None: then implementations run
# through ``recorder.serve(overload, fn, args, kwargs)``, which records the ATen operators they call.
recorder = None


class _CallCounts(Mapping):
    """overload -> calls served by a gems kernel. Each wrapper owns a one-element list it bumps,
    which is cheaper on the per-call path than a shared Counter; the native layer counts the calls it
    replays itself (read here only when asked)."""

    def __init__(self):
        self._cells: dict[str, list] = {}

    def cell(self, overload: str) -> list:
        return self._cells.setdefault(overload, [0])

    def _native(self) -> dict:
        return native_layer.call_counts() if native_layer is not None else {}

    def __getitem__(self, overload):
        python = self._cells[overload][0] if overload in self._cells else 0
        return python + (native_layer.calls_of(overload) if native_layer is not None else 0)

    def __iter__(self):
        native = self._native()
        return iter([o for o, cell in self._cells.items() if cell[0] or native.get(o)]
                    + [o for o in native if o not in self._cells])

    def __len__(self):
        return sum(1 for _ in self)

    def clear(self):
        for cell in self._cells.values():
            cell[0] = 0
        if native_layer is not None:
            native_layer.reset_counts()


gems_calls = _CallCounts()
fallback_calls: Counter = Counter()  # (overload, reason) -> calls handed to ATen

_libraries: dict[str, tuple] = {}  # overload -> (torch.library.Library, function, Autograd, owner op)
# gems' own operators: API name -> schema name ("gems.fused.silu_and_mul" -> "gems::silu_and_mul"), and API name ->
# (handle, function) of their registration, which gems.enable() / disable() leave alone.
_operators: dict[str, str] = {}
_own: dict[str, tuple] = {}


class Fallback(Exception):
    """Raised by an implementation, before any work, for an input it does not handle."""


@contextlib.contextmanager
def aten_only():
    """Inside, registered ops run ATen's kernels: while an emulated kernel runs, and to compute
    ATen's own answer for comparison."""
    global _aten_only_depth
    _enter_aten_only()
    try:
        yield
    finally:
        _exit_aten_only()


def _enter_aten_only():
    global _aten_only_depth
    _aten_only_depth += 1
    if _native_depth is not None:
        _native_depth(1)


def _exit_aten_only():
    global _aten_only_depth
    _aten_only_depth -= 1
    if _native_depth is not None:
        _native_depth(-1)


# gems.native's mirror of the depth (its C++ kernels read it), once the native layer is loaded.
_native_depth = None


def reset_counts() -> None:
    gems_calls.clear()
    fallback_calls.clear()


def registered_ops() -> list[str]:
    return sorted(_libraries)


def qualified(overload: str) -> str:
    """The schema name of ``overload``: "aten::add.Tensor", or "gems::silu_and_mul" for gems' own operators."""
    return _operators.get(overload) or f"aten::{overload}"


def operator_of(overload: str):
    """The torch.ops overload that ``overload`` names (an ATen overload, or one of gems' own operators)."""
    namespace, _, local = qualified(overload).partition("::")
    name, _, variant = local.partition(".")
    return getattr(getattr(getattr(torch.ops, namespace), name), variant or "default")


def implementation(overload: str):
    """The Python implementation registered for ``overload`` (by gems.enable() or :func:`register_operator`), or
    None."""
    entry = _libraries.get(overload) or _own.get(overload)
    return entry[1] if entry is not None else None


def _dispatch_key(vendor_key: str, autograd: Autograd) -> str:
    return f"Autograd{vendor_key}" if autograd is Autograd.enable else vendor_key


@functools.cache
def _original_kernel(overload: str, dispatch_key: str):
    """ATen's kernel for this overload and key, callable after gems overrides it. Looked up once: gems_off
    (gems-perf) re-registers every overload twice per timed round of ATen, ~30 ms a round without the cache."""
    get_kernel = getattr(torch.library, "get_kernel", None)
    if get_kernel is None:  # torch < 2.9
        return _ReregisteringKernel(overload)
    if overload in _SCALAR_BASE_REDIRECTS:
        overload = _SCALAR_BASE_REDIRECTS[overload]
        return _scalar_base_kernel(get_kernel(f"aten::{overload}", dispatch_key).call_boxed)
    try:
        call_boxed = get_kernel(qualified(overload), dispatch_key).call_boxed
    except RuntimeError:  # ATen has no kernel for this key (CUDA-only attention overloads on the CPU)
        return _no_aten_kernel(overload, dispatch_key)
    tensor_positions = _tensor_positions(overload)
    if not tensor_positions:
        return call_boxed

    def call(keyset, *args, **kwargs):
        # The dispatcher hands a Python kernel wrapped numbers as plain numbers; a boxed call needs tensors.
        if any(i < len(args) and isinstance(args[i], (int, float, complex)) for i in tensor_positions):
            args = _numbers_as_tensors(args, tensor_positions)
        return call_boxed(keyset, *args, **kwargs)

    return call


def _no_aten_kernel(overload: str, dispatch_key: str):
    def call(keyset, *args, **kwargs):
        raise NotImplementedError(f"Could not run '{qualified(overload)}' with arguments from the '{dispatch_key}' "
                                  "backend: ATen has no kernel for it there, and gems left this call to ATen")

    return call


# ATen's CUDA pow.Scalar re-dispatches to pow.Tensor_Tensor with the base as a wrapped number on the
# device, which PyTorch cannot hand to a Python kernel (an INTERNAL ASSERT in pybind_utils). So ATen's
# answer for these overloads comes from the Tensor_Tensor kernel, with the base as a 0-d tensor.
_SCALAR_BASE_REDIRECTS = {"pow.Scalar": "pow.Tensor_Tensor", "pow.Scalar_out": "pow.Tensor_Tensor_out"}


def _scalar_base_kernel(call_boxed):
    def call(keyset, base, exponent, **kwargs):
        (base,) = _numbers_as_tensors((base, exponent), (0,))[:1]
        return call_boxed(keyset, base, exponent, **kwargs)

    return call


@functools.cache  # an overload's schema never changes; registering (gems-perf's gems_off per batch) asks often
def _tensor_positions(overload: str) -> tuple[int, ...]:
    schema = operator_of(overload)._schema
    return tuple(i for i, arg in enumerate(schema.arguments)
                 if not arg.kwarg_only and str(arg.type) in ("Tensor", "Tensor?"))


def _numbers_as_tensors(args, positions):
    """Numbers become 0-d tensors that promote as the wrapped numbers they were. Beside a tensor with
    dimensions, a 0-d tensor of the same category never changes the result type, so a float keeps
    float64 precision there (or takes the default dtype beside integers, as a wrapped float does).
    Beside 0-d tensors only, it takes the result type outright."""
    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    dimensioned = any(t.dim() > 0 for t in tensors)
    floating = any(t.is_floating_point() for t in tensors)
    out = list(args)
    for i in positions:
        value = out[i] if i < len(out) else None
        if not isinstance(value, (bool, int, float, complex)):
            continue
        if tensors and not dimensioned:
            out[i] = torch.tensor(value, dtype=torch.result_type(tensors[0], value))
        elif isinstance(value, float):
            out[i] = torch.tensor(value, dtype=torch.float64 if floating else torch.get_default_dtype())
        elif isinstance(value, complex):
            out[i] = torch.tensor(value, dtype=torch.complex128)
        else:
            out[i] = torch.tensor(value)
    return tuple(out)


class _ReregisteringKernel:
    """torch < 2.9 has no handle on an overridden kernel: step aside for one call (slow, rare)."""

    def __init__(self, overload: str):
        self.overload = overload
        self.op = operator_of(overload)

    def __call__(self, keyset, *args, **kwargs):
        lib, fn, autograd, owner = _libraries.pop(self.overload)
        lib._destroy()
        try:
            return self.op(*args, **kwargs)
        finally:
            _register(self.overload, fn, autograd, owner, _registered_key)


def _make_wrapper(overload: str, fn, original, guarded: bool, composite: bool = False):
    """``composite``: ``original`` is a composite of ATen ops (gems' own operators), which a fallback runs as the
    caller's eager code would, its ATen ops served by gems, not inside the guard's aten_only."""
    calls = gems_calls.cell(overload)
    if guarded:
        def impl(keyset, *args, **kwargs):
            if _aten_only_depth:
                return original(keyset, *args, **kwargs)
            _enter_aten_only()
            try:
                out = fn(*args, **kwargs) if recorder is None else recorder.serve(overload, fn, args, kwargs)
            except Fallback as why:
                fallback_calls[overload, str(why)] += 1
                if composite:
                    _exit_aten_only()
                    try:
                        return _unwatched(original, keyset, args, kwargs)
                    finally:
                        _enter_aten_only()
                return _unwatched(original, keyset, args, kwargs)
            finally:
                _exit_aten_only()
            calls[0] += 1
            return out
    else:
        def impl(keyset, *args, **kwargs):
            if _aten_only_depth:
                return original(keyset, *args, **kwargs)
            try:
                out = fn(*args, **kwargs) if recorder is None else recorder.serve(overload, fn, args, kwargs)
            except Fallback as why:
                fallback_calls[overload, str(why)] += 1
                return _unwatched(original, keyset, args, kwargs)
            calls[0] += 1
            return out

    impl.__name__ = f"gems_{overload.replace('.', '_')}"
    return impl


def _unwatched(original, keyset, args, kwargs):
    """ATen's kernel for a fallback. While the native layer records the call, its dispatch mode is
    paused: ATen's own redispatches (a Scalar overload calling the Tensor one with a wrapped number)
    cannot pass through a Python mode."""
    if recording is None:
        return original(keyset, *args, **kwargs)
    with _disable_current_modes():
        return original(keyset, *args, **kwargs)


_registered_key = None


@functools.cache
def _composite_implicit(overload: str) -> bool:
    """ATen decomposes ``overload`` above the backend key (CompositeImplicitAutograd, no autograd kernel)."""
    name, _, variant = overload.partition(".")
    qualified = f"aten::{name}" + (f".{variant}" if variant else "")
    has = torch._C._dispatch_has_kernel_for_dispatch_key
    return has(qualified, "CompositeImplicitAutograd") and not has(qualified, "Autograd")


def check_autograd_placement(overload: str, autograd: Autograd) -> None:
    """A CompositeImplicitAutograd overload has no autograd kernel of its own: ATen decomposes it above the
    backend key. A kernel registered under the backend key then runs with autograd cut off (PyTorch warns
    "an autograd kernel was not registered" at backward), so such an overload takes Autograd.enable."""
    if autograd is not Autograd.enable and _composite_implicit(overload):
        raise ValueError(f"{overload} is CompositeImplicitAutograd in ATen: registered under the backend key it would "
                         "cut autograd off. Register it with Autograd.enable (a function that brings its own "
                         "backward, or returns no differentiable output), or leave it to ATen's decomposition")


def _make_serve(overload: str, impl):
    """The native layer's way into Python: ``serve(keyset, args, kwargs, call, why)`` runs the wrapper and,
    when the C++ side asks (``call`` given: a new call signature), records the call as a plan; otherwise
    ``why`` says why the call left the native path."""
    calls = gems_calls.cell(overload)

    def serve(keyset, args, kwargs, call, why):
        if call is None or _aten_only_depth:
            if why is not None:
                native_layer.note(overload, why)
            return impl(keyset, *args, **kwargs), None
        return native_layer.record_call(impl, keyset, args, kwargs, call, calls, overload)

    return serve


def _traced(values) -> bool:
    """A fake, functional or other subclass tensor among the arguments (torch.compile's tracing)."""
    for v in values:
        if isinstance(v, torch.Tensor) and type(v) is not torch.Tensor and not isinstance(v, torch.nn.Parameter):
            return True
        if isinstance(v, (list, tuple)) and _traced(v):
            return True
    return False


def _composite_when_traced(impl, original):
    """An autograd-level implementation launches kernels on real tensors only: while torch.compile traces
    (fake or functional tensors), ATen's composite decomposes the call into operators the tracer knows."""
    def call(keyset, *args, **kwargs):
        if _traced(args) or _traced(kwargs.values()):
            return original(keyset, *args, **kwargs)
        return impl(keyset, *args, **kwargs)

    call.__name__ = impl.__name__
    return call


# The native dispatch layer (the gems.native module) and the vendor's torch device type, by which it picks its
# launch primitive: both installed by gems.enable(), injected rather than imported (gems.native imports this
# module). Without them every call takes the Python path.
native_layer = None
device_type = None


def _register(overload: str, fn, autograd: Autograd, owner: str, vendor_key: str) -> None:
    check_autograd_placement(overload, autograd)
    _libraries[overload] = (_install(overload, fn, autograd, vendor_key), fn, autograd, owner)


def register_operator(overload: str, operator: str, fn, vendor_key: str,
                      autograd: Autograd = Autograd.enable) -> None:
    """Register ``fn`` for gems' own ``operator`` (a schema name, "gems::silu_and_mul"; gems/runtime/operators.py)
    at the vendor's key, or its Autograd key with ``Autograd.enable`` (a fused operator: its composite is its
    CompositeImplicitAutograd kernel), as an ATen overload is: the native layer replays its calls (at the Autograd
    key, one that needs a graph too when ``fn``'s Function declares its backward: the node is built in C++), the
    Python path serves the others (``fn`` builds the graph), Fallback runs the
    operator's default kernel. Counted under ``overload``; gems.enable() and disable() leave it registered.
    Registering it again replaces the registration."""
    _operators[overload] = operator
    entry = _own.pop(overload, None)
    if entry is not None:
        entry[0]._destroy()
    _own[overload] = (_install(overload, fn, autograd, vendor_key), fn)


def _install(overload: str, fn, autograd: Autograd, vendor_key: str):
    """The registration handle (native, else torch.library) of the counting wrapper around ``fn``."""
    global _native_depth
    key = _dispatch_key(vendor_key, autograd)
    original = _original_kernel(overload, key)
    impl = _make_wrapper(overload, fn, original, kernels_call_torch, composite=overload in _operators)
    if autograd is Autograd.enable:
        impl = _composite_when_traced(impl, original)
    handle = None
    if native_layer is not None and device_type is not None:
        try:
            handle = native_layer.register(overload, key, device_type, _make_serve(overload, impl), fn,
                                           _operators.get(overload))
        except RuntimeError:  # ATen has no kernel for this key to fall back to: the Python path serves it
            handle = None
        if handle is not None and _native_depth is None:
            _native_depth = native_layer.aten_only_add
            _native_depth(_aten_only_depth)
    if handle is None:
        namespace, _, local = qualified(overload).partition("::")
        handle = torch.library.Library(namespace, "IMPL")
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="(?s).*Overriding a previously registered kernel")
            handle.impl(local, impl, key, with_keyset=True)
    return handle


def snapshot() -> dict:
    """The registered table, ``{overload: (fn, Autograd, owner)}``, for :func:`apply` to restore."""
    return {overload: entry[1:] for overload, entry in _libraries.items()}


def apply(table: dict, vendor_key: str | None) -> None:
    """Make the registered overloads exactly ``table``, touching only what differs."""
    global _registered_key
    for overload in [o for o, entry in _libraries.items() if table.get(o) != entry[1:]]:
        _libraries.pop(overload)[0]._destroy()
    if table:
        _registered_key = vendor_key
    for overload, (fn, autograd, owner) in table.items():
        if overload not in _libraries:
            _register(overload, fn, autograd, owner, vendor_key)
