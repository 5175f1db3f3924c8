"""Recording a call of a Python implementation as a launch plan, and replaying plans in Python.

While a call is recorded, :class:`gems.runtime.launch.Launcher` reports every kernel launch here and a
dispatch mode watches the ATen ops the implementation calls. A plan is made only when everything the
call did can be redone from its signature alone:

- the only ATen ops it called allocate (``empty*``) or make views; anything that computes (a copy,
  a fill, ``.item()``, a nested operator) means "stay in Python" for this signature;
- every kernel argument is a constant, or a pointer into an input, an output or a temporary buffer
  the call allocated (plus a fixed byte offset);
- every result is an input tensor (out=, in-place), a fresh dense allocation or None (an optional
  result not asked for, as in ``convolution_backward``'s output_mask);
- the random generators' states did not move (no random numbers drawn).

Plan spec handed to C++: ``(outs, temps, cuda_launches, py_plan, launch_count)``.
"""

from __future__ import annotations

import struct

import torch
from torch.utils._python_dispatch import TorchDispatchMode, _disable_current_modes
from triton.runtime.jit import JITFunction

from gems.runtime import registration

aten = torch.ops.aten
_ALLOCATING = {aten.empty.memory_format, aten.empty_strided.default, aten.empty_like.default,
               aten.new_empty.default, aten.new_empty_strided.default}
# Ops that read only metadata (dtypes, shapes): they decide nothing a key does not cover.
_METADATA = {aten.result_type, aten.can_cast, aten.promote_types, aten.is_same_size}
# Integer and float kernel parameters as triton 3.6's launcher packs them (backends/nvidia/driver.py).
_FORMATS = {"i1": "b", "i8": "b", "u1": "B", "u8": "B", "i16": "h", "u16": "H", "i32": "i", "u32": "I",
            "i64": "q", "u64": "Q", "fp16": "e", "fp32": "f", "f32": "f", "fp64": "d"}


# overload -> why the latest new call signature of it stays on the Python path (gems.native.python_reasons()):
# how a user finds out why a call costs the Python dispatcher hop every time.
python_reasons: dict = {}


class NotRecordable(Exception):
    """The call did something a plan cannot express; the reason says what."""


class _Watch(TorchDispatchMode):
    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        # TorchDispatchMode would wrap __torch_dispatch__ in torch._disable_dynamo, importing torch._dynamo
        # (seconds) at a process's first recorded call; a recording is eager code only, never compiled.
        return False

    def __init__(self, recording):
        super().__init__()
        self.recording = recording

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        try:
            out = func(*args, **(kwargs or {}))
        except RuntimeError as exc:
            # A wrapped number reaches a Python mode as a plain number, which the op's own schema then
            # refuses (ATen redispatching inside a kernel does this); run it with the number as a tensor.
            if "Expected a value of type 'Tensor'" not in str(exc) or func.namespace != "aten":
                raise
            overload = f"{func._schema.name.split('::')[1]}.{func._overloadname}"
            args = registration._numbers_as_tensors(args, registration._tensor_positions(overload))
            out = func(*args, **(kwargs or {}))
        if func in _ALLOCATING:
            self.recording.allocated.add(out.untyped_storage().data_ptr())
        elif not (func.is_view or func.overloadpacket in _METADATA):
            self.recording.refused = self.recording.refused or f"it called {func}"  # the first one says most
        return out


class Recording:
    """``with Recording(tensors, primitive): impl(...)``, then :meth:`spec` of the result."""

    def __init__(self, tensors: tuple, primitive: str):
        self.tensors = tensors  # the call's tensors in stack order ("input i")
        self.primitive = primitive
        self.launches = []  # (launcher, compiled, grid, options, args)
        self.allocated = set()  # storages the call allocated
        self.refused = None
        self.deferred = None  # why this call cannot be a plan but a later one of its signature may (tuning)
        self.why_python = None
        self._mode = _Watch(self)

    def __enter__(self):
        self._previous = registration.recording
        registration.recording = self
        self._mode.__enter__()
        return self

    def __exit__(self, *exc):
        self._mode.__exit__(*exc)
        registration.recording = self._previous

    def paused(self):
        """Around a launch: the interpreter's own torch calls are not the implementation's."""
        return _disable_current_modes()

    def launched(self, launcher, compiled, grid, options, args, hooks=False):
        if hooks and self.primitive == "cuda":
            self.refused = "Triton launch hooks are installed"
        self.launches.append((launcher, compiled, tuple(grid) + (1,) * (3 - len(grid)), options, args))

    # ------------------------------------------------------------------ the plan
    def spec(self, result):
        """The plan spec, or False (this signature stays in Python; :attr:`why_python` says why)."""
        try:
            return self._spec(result)
        except NotRecordable as exc:
            self.why_python = str(exc)
            return False

    def _spec(self, result):
        if self.refused:
            raise NotRecordable(self.refused)
        returns = result if isinstance(result, tuple) else (result,)
        outs, fresh = [], {}
        for j, r in enumerate(returns):
            if r is None:  # an optional result not asked for (an undefined tensor in C++)
                outs.append((2, j))
                continue
            if type(r) is not torch.Tensor:
                raise NotRecordable("a result is not a tensor")
            k = next((i for i, t in enumerate(self.tensors) if r is t), None)
            if k is not None:
                outs.append((1, k))
                continue
            storage = r.untyped_storage()
            if (storage.data_ptr() not in self.allocated or storage.data_ptr() in fresh or r.storage_offset()
                    or storage.nbytes() != _dense_nbytes(r)):
                raise NotRecordable("a result is not a fresh dense allocation")
            fresh[storage.data_ptr()] = j
            outs.append((0, j, tuple(r.shape), tuple(r.stride()), r.dtype, -1 if r.device.index is None
                         else r.device.index))
        self._returns, self._fresh, self._temps = returns, fresh, {}
        cuda_launches, py_plan = [], []
        for launcher, compiled, grid, options, args in self.launches:
            argspec = [self._arg(a) for a in args]
            py_plan.append((launcher, grid, options, argspec))
            if self.primitive == "cuda":
                cuda_launches.append(self._cuda_launch(launcher, compiled, grid, args, argspec))
        temps = [nbytes for _, nbytes in sorted(self._temps.values())]
        return outs, temps, cuda_launches, py_plan, len(py_plan)

    def _arg(self, value):
        """("c", constant) or ("t", kind, index, byte offset, dtype, shape, strides)."""
        if not isinstance(value, torch.Tensor):
            return ("c", value)
        kind, index, delta = self._locate(value)
        return ("t", kind, index, delta, value.dtype, tuple(value.shape), tuple(value.stride()))

    def _locate(self, t):
        for i, src in enumerate(self.tensors):
            if t is src:
                return 0, i, 0
        for j, r in enumerate(self._returns):
            if t is r:
                return 1, j, 0
        ptr, storage = t.data_ptr(), t.untyped_storage().data_ptr()
        if storage in self._fresh:
            j = self._fresh[storage]
            return 1, j, ptr - self._returns[j].data_ptr()
        owners = [i for i, src in enumerate(self.tensors) if src.untyped_storage().data_ptr() == storage]
        if len(owners) == 1:
            return 0, owners[0], ptr - self.tensors[owners[0]].data_ptr()
        if owners:
            raise NotRecordable("a kernel argument views memory that several inputs share")
        if storage in self.allocated:
            k, _ = self._temps.setdefault(storage, (len(self._temps), t.untyped_storage().nbytes()))
            return 2, k, ptr - storage
        raise NotRecordable("a kernel argument is memory from outside the call")

    def _cuda_launch(self, launcher, compiled, grid, args, argspec):
        meta = getattr(compiled, "metadata", None)
        if meta is None or not getattr(compiled, "function", None):
            raise NotRecordable("no compiled kernel handle")
        if (getattr(meta, "num_ctas", 1) != 1 or getattr(meta, "launch_cooperative_grid", False)
                or getattr(meta, "launch_pdl", False) or getattr(meta, "global_scratch_size", 0)
                or getattr(meta, "profile_scratch_size", 0) or getattr(meta, "tensordesc_meta", None)):
            raise NotRecordable("the kernel needs launch features the native primitive does not set")
        fn = launcher.kernel
        while not isinstance(fn, JITFunction):
            fn = fn.fn
        bound = dict(zip(fn.arg_names, zip(args, argspec)))
        params, patches = [], []
        for name, ty in compiled.src.signature.items():
            name = fn.arg_names[name] if isinstance(name, int) else name
            if ty == "constexpr":
                continue
            if name not in bound or not isinstance(ty, str):
                raise NotRecordable(f"kernel parameter {name} ({ty}) is not a plain argument")
            value, spec = bound[name]
            if ty.startswith("*"):
                if spec[0] != "t":
                    raise NotRecordable(f"pointer parameter {name} is not a tensor")
                patches.append((len(params), spec[1], spec[2], spec[3]))
                params.append(0)
            elif ty == "bf16":
                bits = torch.tensor(float(value), dtype=torch.bfloat16).view(torch.int16).item()
                params.append(bits & 0xFFFF)
            elif ty in _FORMATS:
                raw = struct.pack("<" + _FORMATS[ty], value).ljust(8, b"\0")
                params.append(int.from_bytes(raw, "little", signed=True))
            else:
                raise NotRecordable(f"kernel parameter type {ty}")
        return (compiled.function, *grid, 32 * meta.num_warps, meta.shared, params, patches)


def record_call(impl, keyset, args, kwargs, tensors, calls, primitive, overload):
    """Run ``impl`` (the registration wrapper) for a new call signature of ``overload``; returns (result, plan
    spec), with False for "this signature stays in Python" (the reason kept in :data:`python_reasons`) and
    None for "decide again next time"."""
    if torch.cuda.is_available() and torch.cuda.is_current_stream_capturing():
        return impl(keyset, *args, **kwargs), None  # record outside capture: the state checks are not capture-safe
    served = calls[0] + 1
    rng = _rng_states()
    recording = Recording(tensors, primitive)
    with recording:
        result = impl(keyset, *args, **kwargs)
    if calls[0] != served:
        python_reasons[overload] = "ATen served it (a fallback)"
        return result, False  # the same signature falls back again
    after = _rng_states()
    with registration.aten_only():  # torch.equal is a gems operator too: it would be recorded in turn
        drew = len(after) != len(rng) or not all(torch.equal(a, b) for a, b in zip(rng, after))
    if drew:
        python_reasons[overload] = "it drew random numbers (a replay would repeat them)"
        return result, False
    if recording.deferred:
        return result, None
    spec = recording.spec(result)
    if spec is False:
        python_reasons[overload] = recording.why_python
    return result, spec


def _rng_states() -> list:
    states = [torch.default_generator.get_state()]
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        states += [g.get_state() for g in torch.cuda.default_generators]
    return states


def _dense_nbytes(t: torch.Tensor) -> int:
    if t.numel() == 0:
        return 0
    return (1 + sum((size - 1) * stride for size, stride in zip(t.shape, t.stride()))) * t.element_size()


def replay(py_plan, inputs, outputs, temps) -> None:
    """The Python launch primitive: rebuild each launch's arguments and launch through its Launcher."""
    groups = (inputs, outputs, temps)
    for launcher, grid, options, argspec in py_plan:
        args = [a[1] if a[0] == "c" else _tensor(groups, a) for a in argspec]
        launcher(grid, *args, **options)


def _tensor(groups, spec):
    _, kind, index, delta, dtype, shape, stride = spec
    base = groups[kind][index]
    if delta == 0 and base.dtype is dtype and tuple(base.shape) == shape and tuple(base.stride()) == stride:
        return base
    if base.dtype is not dtype:  # a temporary buffer (bytes) or a reinterpreted result (0-d: as one element)
        base = (base.reshape(1) if base.dim() == 0 else base).view(dtype)
    return base.as_strided(shape, stride, base.storage_offset() + delta // base.element_size())
