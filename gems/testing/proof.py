"""Proof that gems kernels computed a conformance case's result.

While a case runs gems, a :class:`Recorder` sits in two hooks of the runtime:

- ``gems.runtime.launch.recorder``: each kernel launch through ``Launcher`` is counted under its
  kernel's name. Torch operators that run during a launch belong to the kernel (the interpreter's
  emulation of it, an autotuner's benchmarking) and are not judged.
- ``gems.runtime.registration.recorder``: each registered gems implementation runs under a
  ``TorchDispatchMode`` that records every ATen operator it calls.

An ATen operator is judged by what it does to values. Allocation, views and metadata
(:data:`ALLOCATION`, views by their schema, :data:`METADATA`) compute nothing; copies
(:data:`MOVES`) carry values without changing them; every other operator computes, a copy that
changes the dtype included, unless all its tensors are on the meta device (a dtype or shape asked of
ATen's meta kernel). Two rules follow:

- **Nothing computes inside an implementation.** Every operator that computes inside a gems
  implementation is recorded under the overload it served (``computed_inside``); the case fails unless
  the declaration allows that operator there (``OpSpec.aten_decisions``, with a reason). A number read
  back to the host can steer a kernel in ways no mark follows (an index ATen found, read as an integer
  and passed as a kernel argument), so the computation itself is what is judged, integer or floating.
- **What ATen computed reaches no result.** Values are followed by storage: a tensor an operator that
  computes writes (its result, its ``out=``, its ``self`` in place) is marked with the operator; a
  copy, and a kernel launch, carry the marks of what they read to what they write (a kernel's to every
  tensor it is given); a floating number read back from a marked tensor marks the implementation's
  later launches. An implementation whose returned or written tensors carry a mark had part of its
  result computed by ATen, and so had one that returns a number (allclose's bool) after reading a marked
  tensor back. This holds for allowed operators too: an allowance is for deciding (a check that raises,
  a path to take), never for a value of the result.
"""

from __future__ import annotations

import contextlib
import functools
import weakref
from collections import Counter

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from gems import native
from gems.runtime import launch, registration

# Operators that make storage or fill it with a constant: the first step of any result.
ALLOCATION = frozenset({
    "empty", "empty_like", "empty_strided", "empty_permuted", "new_empty", "new_empty_strided", "resize_",
    "resize_as_", "set_", "zeros", "zeros_like", "new_zeros", "zero_", "ones", "ones_like", "new_ones", "full",
    "full_like", "new_full", "scalar_tensor", "lift_fresh", "lift_fresh_copy",
})
# Operators that read shapes, strides, dtypes or one value to the host.
# (_debug_has_internal_overlap reads a tensor's layout, never its values.)
METADATA = frozenset({"sym_size", "sym_stride", "sym_numel", "sym_storage_offset", "item", "_local_scalar_dense",
                      "is_nonzero", "is_same_size", "result_type", "can_cast", "promote_types",
                      "_debug_has_internal_overlap"})
# Copies: the values they write are the values they read (fill_.Tensor copies a 0-d tensor's value).
MOVES = frozenset({"copy_", "clone", "_to_copy", "_unsafe_view", "fill_"})


def _kind(func, args, kwargs=None, out=None) -> str:
    """'allocation', 'view', 'metadata', 'move' or 'compute' ('meta' for an operator that would compute
    but has only meta tensors, given its arguments and result)."""
    name = func._schema.name.removeprefix("aten::")
    if name == "fill_":
        return "move" if func._overloadname == "Tensor" else "allocation"
    if name in ALLOCATION:
        return "allocation"
    if name in METADATA:
        return "metadata"
    if func.is_view or name == "detach_":  # detach_ changes autograd metadata in place (torch.tensor() calls it)
        return "view"
    if name in MOVES:
        return "move"
    tensors = _tensors(args) + _tensors(kwargs or {}) + _tensors(out)
    if tensors and all(t.device.type == "meta" for t in tensors):
        return "meta"
    return "compute"


def _tensors(value) -> list:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors(v)]
    return []


def _written(schema, args, kwargs) -> list:
    """The tensors an operator call writes in place (``self`` of ``add_``, ``out=``)."""
    written = []
    for i, argument in enumerate(schema.arguments):
        if argument.alias_info is not None and argument.alias_info.is_write:
            value = args[i] if i < len(args) and not argument.kwarg_only else kwargs.get(argument.name)
            written += _tensors(value)
    return written


@functools.cache
def schema_of(overload: str):
    return registration.operator_of(overload)._schema


def _kernel_name(kernel) -> str:
    while not hasattr(kernel, "__name__") and hasattr(kernel, "fn"):
        kernel = kernel.fn  # an Autotuner or Heuristics wraps the JITFunction
    return getattr(kernel, "__name__", type(kernel).__name__)


class Recorder:
    """What serving one case did: kernel launches, the ATen operators gems implementations called,
    and the operators that computed part of what an implementation returned or wrote."""

    def __init__(self):
        self.launches = 0
        self.kernels: Counter = Counter()  # kernel name -> launches
        self.aten_ops: Counter = Counter()  # "aten.op.overload" -> calls inside gems implementations
        self.computed_by_aten: dict[str, set] = {}  # gems overload -> ATen operators that computed its result
        self.computed_inside: dict[str, set] = {}  # gems overload -> ATen operators that computed inside it
        self._marks = weakref.WeakKeyDictionary()  # untyped storage -> ATen operators that wrote it
        # Per running implementation: its overload, the operators behind the numbers it read back ("any"), and
        # behind the floating ones, which are values on their way into a kernel rather than decisions ("floating").
        self._host_marks: list[dict] = []
        self._paused = 0  # > 0 while a kernel runs

    # ---- hooks (called by gems.runtime.launch and gems.runtime.registration)
    def launch(self, launcher, grid_x, grid_y, grid_z, num_warps, num_stages, args) -> None:
        self.count_launch(_kernel_name(launcher.kernel))
        self._paused += 1
        try:
            launcher._launch(grid_x, grid_y, grid_z, num_warps, num_stages, args)
        finally:
            self._paused -= 1
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        marks = set().union(*(self._marks_of(t) for t in tensors), *(f["floating"] for f in self._host_marks[-1:]))
        if marks:
            for t in tensors:
                self._mark(t, marks)

    def count_launch(self, kernel_name: str, launches: int = 1) -> None:
        """A launch made outside ``Launcher`` (a native layer replaying a known call) counts here."""
        self.launches += launches
        self.kernels[kernel_name] += launches

    def serve(self, overload: str, fn, args, kwargs):
        """Run one gems implementation, recording the ATen operators it calls."""
        if self._paused:
            return fn(*args, **kwargs)
        self._host_marks.append({"overload": overload, "any": set(), "floating": set()})
        try:
            with _Mode(self):
                out = fn(*args, **kwargs)
        finally:
            read_back = self._host_marks.pop()["any"]
        results = _tensors(out) + _written(schema_of(overload), args, kwargs)
        marks = set().union(*(self._marks_of(t) for t in results))
        if isinstance(out, (bool, int, float, complex)):
            marks |= read_back  # a number computed on the host from what ATen computed
        if marks:
            self.computed_by_aten.setdefault(overload, set()).update(marks)
        return out

    # ---- following values
    def _marks_of(self, t: torch.Tensor) -> set:
        if t.device.type == "meta":
            return set()
        return self._marks.get(t.untyped_storage(), set())

    def _mark(self, t: torch.Tensor, marks: set) -> None:
        if t.device.type != "meta":
            self._marks.setdefault(t.untyped_storage(), set()).update(marks)

    def _note(self, func, args, kwargs, out, served_by_gems: bool) -> None:
        name = str(func)
        self.aten_ops[name] += 1
        kind = "move" if served_by_gems else _kind(func, args, kwargs, out)  # a gems kernel served a nested call
        if kind in ("allocation", "view", "meta"):
            return
        inputs = _tensors(args) + _tensors(kwargs)
        read = set().union(*(self._marks_of(t) for t in inputs))
        if kind == "metadata":
            if read and self._host_marks:
                self._host_marks[-1]["any"].update(read)
                if inputs[0].is_floating_point() or inputs[0].is_complex():
                    self._host_marks[-1]["floating"].update(read)
            return
        if kind == "move" and func._schema.name in ("aten::copy_", "aten::_to_copy"):
            source = args[1] if func._schema.name == "aten::copy_" else args[0]
            target_dtype = args[0].dtype if func._schema.name == "aten::copy_" else kwargs.get("dtype")
            if target_dtype is not None and target_dtype != source.dtype:
                kind = "compute"  # a conversion rounds: ATen computes the converted values
        if kind == "compute" and self._host_marks:
            self.computed_inside.setdefault(self._host_marks[-1]["overload"], set()).add(name)
        marks = read | ({name} if kind == "compute" else set())
        if marks:
            for t in _tensors(out) + _written(func._schema, args, kwargs):
                self._mark(t, marks)


class EagerMode(TorchDispatchMode):
    """A mode that only ever runs in eager code. TorchDispatchMode wraps a subclass's ``__torch_dispatch__``
    in ``torch._disable_dynamo`` by default, which imports torch._dynamo (about 4 s on 2 busy cores) in
    every process at its first dispatch; nothing here is ever compiled, so that wrapper is left off."""

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        return False


class _Mode(EagerMode):
    def __init__(self, recorder: Recorder):
        super().__init__()
        self.recorder = recorder

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        recorder = self.recorder
        if recorder._paused:  # the kernel's own torch calls (the interpreter's emulation)
            return func(*args, **kwargs)
        launches = recorder.launches
        out = func(*args, **kwargs)
        recorder._note(func, args, kwargs, out, served_by_gems=recorder.launches != launches)
        return out


def overload_name(func) -> str:
    """``aten.add.Tensor`` -> ``add.Tensor``, ``aten.abs.default`` -> ``abs`` (as gems registers them)."""
    name = func._schema.name.removeprefix("aten::")
    return name if func._overloadname == "default" else f"{name}.{func._overloadname}"


class AtenComputed(EagerMode):
    """Around a case's call (and its backward): which tensors ATen computed outside gems. ATen's own
    kernels may be nondeterministic (CUDA's atomics in scatter_add, in cummax's backward), so only what
    gems computed must repeat bit for bit in the warm call.

    Every operator the call dispatches is seen here: one served by gems (its calls counted in
    ``registration.gems_calls``; one gems registers with its own autograd shows here as the operators
    inside it) carries the marks of what it read to what it writes, as copies and kernel launches do; any
    other operator that computes marks what it writes. Allocation, views and metadata compute nothing."""

    def __init__(self):
        super().__init__()
        self._marks = weakref.WeakKeyDictionary()  # untyped storage -> True (ATen computed part of it)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        overload = overload_name(func)
        served = registration.gems_calls[overload]
        out = func(*args, **kwargs)
        kind = _kind(func, args, kwargs, out)
        if kind in ("allocation", "view", "metadata", "meta"):
            return out
        by_gems = registration.gems_calls[overload] != served
        marked = (kind == "compute" and not by_gems) or any(self.computed(t) for t in _tensors(args) + _tensors(kwargs))
        if marked:
            for t in _tensors(out) + _written(func._schema, args, kwargs):
                if t.device.type != "meta":
                    self._marks[t.untyped_storage()] = True
        return out

    def computed(self, t: torch.Tensor) -> bool:
        """Whether ATen computed (part of) ``t``'s values outside gems while the mode was on."""
        return t.device.type != "meta" and self._marks.get(t.untyped_storage(), False)


@contextlib.contextmanager
def recording():
    """Install a fresh :class:`Recorder` in the runtime's hooks for the block."""
    recorder = Recorder()
    previous = launch.recorder, registration.recorder
    launch.recorder = registration.recorder = recorder
    replayed = native.launch_counts()
    try:
        yield recorder
    finally:
        launch.recorder, registration.recorder = previous
        # A call the native layer served from a recorded plan launched its kernels from C++, with no Python
        # on the way (and so no ATen operator): count them from its counters.
        for overload, launches in native.launch_counts().items():
            if launches > replayed.get(overload, 0):
                recorder.count_launch(f"native replay of {overload}", launches - replayed.get(overload, 0))
