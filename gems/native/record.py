"""Recording a call of a Python implementation as a launch plan, and replaying plans in Python.

While a call is recorded, :class:`gems.runtime.launch.Launcher` reports every kernel launch here and a
dispatch mode watches the ATen ops the implementation calls. A plan is made only when everything the
call did can be redone from its signature alone:

- the only ATen ops it called allocate (``empty*``) or make views; anything that computes (a copy,
  a fill, ``.item()``, a nested operator) means "stay in Python" for this signature; a count read back through
  :func:`gems.native.read_record.read_count` makes a plan with a host read instead;
- every kernel argument is a constant, or a pointer into an input, an output or a temporary buffer
  the call allocated (plus a fixed byte offset);
- every result is an input tensor (out=, in-place), a fresh dense allocation, None (an optional
  result not asked for, as in ``convolution_backward``'s output_mask) or an integer (a SymInt result);
- the random generators' states moved only by the Philox keys the call took through
  ``gems.ops.random.philox.philox_key`` from the default generator: those kernel arguments are
  :class:`DrawnWord` in the plan, and every replay takes fresh keys, moving the generator as the call did;
- flags its kernels wrote were read on the host only through :func:`flags_clear` (a check of values where
  kernels are interpreted): the Python primitive's replay reads them after its launches, and a failed check
  sends the call to the Python path, which raises ATen's error.

Plan spec handed to C++: ``(outs, temps, cuda_launches, py_plan, launch_count, draws[, node])``, or a str: "this
signature stays in Python", and why; ``node``: a training-mode call's autograd node
(:mod:`gems.native.autograd_record`). A second call of the same family (the same key but for sizes and integer
arguments) may also get a size-generic plan (:mod:`gems.native.generic`, asked by
:func:`gems.native.record_call`), derived from dry runs:
the implementation run at other sizes with its launches recorded, not executed (:class:`Recording` with
``dry=True``).
"""

from __future__ import annotations

from collections import Counter

import torch
from torch.utils._python_dispatch import TorchDispatchMode, _disable_current_modes

from gems.native.cuda_params import cuda_launch as _cuda_launch
from gems.native.refusals import NotRecordable, NotYet
from gems.runtime import registration

aten = torch.ops.aten
_ALLOCATING = {aten.empty.memory_format, aten.empty_strided.default, aten.empty_like.default,
               aten.new_empty.default, aten.new_empty_strided.default}
# Ops that read only metadata (dtypes, shapes, strides): they decide nothing a key does not cover.
_METADATA = {aten.result_type, aten.can_cast, aten.promote_types, aten.is_same_size, aten._debug_has_internal_overlap}
NEW_SIGNATURE = "the first call of its signature (recorded)"
_MAX_DRAWS = 4  # Philox keys per call a plan may take (dispatch.cpp's kMaxDraws)

# overload -> why the latest of its calls that left the native path did (gems.native.python_reasons()), and
# (overload, reason) -> such calls: how a user finds out why a call costs the Python dispatcher hop.
python_reasons: dict = {}
python_calls: Counter = Counter()
# Builds a plan with a host read (gems.native.read_record.read_spec, which sets it when imported: a call that reads
# a count went through its read_count). Set there, not imported here: read_record builds on this module.
read_variants = None


def note(overload: str, why: str) -> None:
    python_reasons[overload] = why
    python_calls[overload, why] += 1


class DrawnWord(int):
    """A word of a Philox key the recorded call took (``field`` 0 its seed, 1 its offset) from the default
    generator, its ``draw``-th: a replay passes a fresh key's word there, ``increment`` words further on."""

    def __new__(cls, value: int, draw: int, field: int, increment: int, device: torch.device):
        word = super().__new__(cls, value)
        word.draw, word.field, word.increment, word.device = draw, field, increment, device
        return word


class DryRunStopped(Exception):
    """A dry run met something it must not execute (a computing ATen op, an autotuner); the reason is kept
    in the recording, so an implementation that catches this still yields no plan."""


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
        computes = not (func in _ALLOCATING or func.is_view or func.overloadpacket in _METADATA)
        if computes and self.recording.dry:  # never run it: it could write to the caller's tensors
            self.recording.stop(f"it called {func}")
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
        elif not computes and _copied(func, args, out):
            self.recording.refused = self.recording.refused or f"it called {func}, which copied (no view was possible)"
        elif computes:
            self.recording.refused = self.recording.refused or f"it called {func}"  # the first one says most
        return out


def _copied(func, args, out) -> bool:
    """Whether a view op (reshape, contiguous, flatten: "a view if possible") made a copy, which the watch did not
    see computing (it ran inside the op)."""
    if not (func.is_view and isinstance(out, torch.Tensor) and args and isinstance(args[0], torch.Tensor)):
        return False
    return out.untyped_storage().data_ptr() != args[0].untyped_storage().data_ptr()


class Recording:
    """``with Recording(tensors, primitive): impl(...)``, then :meth:`plan` of the result. ``dry``: launches
    are recorded and not executed, and any ATen op that computes stops the call (a size-generic plan's probe)."""

    def __init__(self, tensors: tuple, primitive: str, dry: bool = False):
        self.tensors = tensors  # the call's tensors in stack order ("input i")
        self.primitive = primitive
        self.dry = dry
        self.launches = []  # (launcher, compiled, grid, options, args)
        self.allocated = set()  # storages the call allocated
        self.refused = None
        self.deferred = None  # why this call cannot be a plan but a later one of its signature may (tuning)
        self.draws = []  # (generator, increment) of each Philox key the call took
        self.checks = []  # flag tensors read on the host (flags_clear)
        self.applied = []  # (Function, inputs) of each declared autograd Function applied (native_backward)
        self.reads = []  # (tensor, most, launches before it, value) of each count read back (read_record)
        self.read_value = None  # a dry run's answer to a read (read_record's probes)
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

    def stop(self, why: str):
        self.refused = self.refused or why
        raise DryRunStopped(why)

    def drawn(self, seed: int, offset: int, generator, increment: int, device: torch.device) -> tuple:
        """The key (seed, offset) the call took from the default ``generator``, as words a replay takes anew."""
        draw = len(self.draws)
        self.draws.append((generator, increment))
        return (DrawnWord(seed, draw, 0, increment, device), DrawnWord(offset, draw, 1, increment, device))

    def launched(self, launcher, compiled, grid, options, args, hooks=False):
        if hooks and self.primitive == "cuda":
            self.refused = "Triton launch hooks are installed"
        self.launches.append((launcher, compiled, tuple(grid) + (1,) * (3 - len(grid)), options, args))

    # ------------------------------------------------------------------ the plan
    def plan(self, result, keep=()):
        """The call as data (:class:`Plan`), or None (this signature stays in Python; :attr:`why_python` says why).
        ``keep``: other tensors of the call to locate (an autograd node's saved tensors), as ``plan.kept``."""
        try:
            return self._plan(result, keep)
        except NotRecordable as exc:
            self.why_python = str(exc)
            return None

    def _plan(self, result, keep=()):
        if self.refused:
            raise NotRecordable(self.refused)
        returns = result if isinstance(result, tuple) else (result,)
        outs, fresh = [], {}
        for j, r in enumerate(returns):
            if r is None:  # an optional result not asked for (an undefined tensor in C++)
                outs.append((2, j))
                continue
            if type(r) is int:  # a SymInt result (the attention overloads' max_q, max_k)
                outs.append((3, j, r))
                continue
            if type(r) is not torch.Tensor:
                raise NotRecordable("a result is neither a tensor nor an integer")
            k = next((i for i, t in enumerate(self.tensors) if r is t), None)
            if k is not None:
                outs.append((1, k))
                continue
            storage = r.untyped_storage()
            if r.numel() == 0 and storage.nbytes() == 0:  # empty: no memory to tell apart (unique's unasked results)
                outs.append((0, j, tuple(r.shape), tuple(r.stride()), r.dtype, -1 if r.device.index is None
                             else r.device.index))
                continue
            if (storage.data_ptr() not in self.allocated or storage.data_ptr() in fresh or r.storage_offset()
                    or storage.nbytes() != _dense_nbytes(r)):
                raise NotRecordable("a result is not a fresh dense allocation")
            fresh[storage.data_ptr()] = j
            outs.append((0, j, tuple(r.shape), tuple(r.stride()), r.dtype, -1 if r.device.index is None
                         else r.device.index))
        self._returns, self._fresh, self._temps = returns, fresh, {}
        launches = [(launcher, compiled, grid, options, [self._arg(a) for a in args], args)
                    for launcher, compiled, grid, options, args in self.launches]
        try:
            kept = [self._arg(t) for t in keep]  # before the temps are listed: a saved buffer is one
        except NotRecordable as exc:
            raise NotRecordable(f"autograd: a tensor its Function saved: {exc}") from exc
        temps = [nbytes for _, nbytes in sorted(self._temps.values())]
        if len(self.draws) > _MAX_DRAWS:
            raise NotRecordable(f"it took more than {_MAX_DRAWS} Philox keys")
        passed = {(a[1], a[2]) for *_, argspec, _ in launches for a in argspec if a[0] == "g"}
        if passed != {(draw, field) for draw in range(len(self.draws)) for field in (0, 1)}:
            # a word reached a kernel changed (offset + k): a replay would pass the recorded call's key again
            raise NotRecordable("a Philox key it took reached no kernel as taken")
        checks = [self._arg(flags) for flags in self.checks]
        if checks and self.primitive == "cuda":  # unreached on the interpreter: compiled kernels assert instead
            raise NotRecordable("it reads flags on the host (the CUDA primitive replays no host check)")
        return Plan(outs, temps, launches, checks, kept)

    def _arg(self, value):
        """("c", constant or never-read placeholder tensor), ("g", draw, field, increment, device) (a Philox key
        word) or ("t", kind, index, byte offset, dtype, shape, strides)."""
        if isinstance(value, DrawnWord):
            return ("g", value.draw, value.field, value.increment, value.device)
        if (not isinstance(value, torch.Tensor) or getattr(value, registration.NEVER_READ, False)
                or getattr(value, registration.KEY_TABLE, False)):
            return ("c", value)  # a never-read placeholder or a table of key words: the plan keeps it, and its address
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
        # One owner, or one tensor given as several arguments (the key holds which arguments are the same
        # tensor, so every replay of the plan has them the same: a backward's dy passed as ds too).
        if owners and all(self.tensors[i] is self.tensors[owners[0]] for i in owners):
            return 0, owners[0], ptr - self.tensors[owners[0]].data_ptr()
        if owners:
            raise NotRecordable("a kernel argument views memory that several inputs share")
        if storage in self.allocated:
            k, _ = self._temps.setdefault(storage, (len(self._temps), t.untyped_storage().nbytes()))
            return 2, k, ptr - storage
        raise NotRecordable("a kernel argument is memory from outside the call")


class Plan:
    """A recorded call: ``outs`` ((0, j, shape, strides, dtype, device index) fresh / (1, input) / (2, j) None /
    (3, j, value) an integer),
    ``temps`` (bytes), ``launches`` ((launcher, compiled, grid, options, argspec, args)), ``checks`` (the argspecs
    of flag tensors read on the host after the launches), ``kept`` (the argspecs of the tensors a training-mode
    call's autograd node saves: gems/native/autograd_record.py). :meth:`spec` is what C++ stores; ``refs`` (slot ->
    index of a computed number) makes a size-generic plan's spec."""

    def __init__(self, outs, temps, launches, checks=(), kept=()):
        self.outs, self.temps, self.launches, self.checks = outs, temps, launches, tuple(checks)
        self.kept = tuple(kept)

    def spec(self, primitive: str, refs=None):
        refs = refs or {}
        cuda_launches, py_plan, increments, draw_params = [], [], {}, []
        for n, (launcher, compiled, grid, options, argspec, args) in enumerate(self.launches):
            grid_refs = tuple(_Ref(refs[("grid", n, i)]) if ("grid", n, i) in refs else g for i, g in enumerate(grid))
            py_args = [_with_refs(a, refs, n, p) for p, a in enumerate(argspec)]
            py_plan.append((launcher, grid_refs, options, py_args))
            if primitive == "cuda":
                launch, where = _cuda_launch(launcher, compiled, grid, args, argspec)
                cuda_launches.append(launch)
                for p, a in enumerate(argspec):
                    if a[0] == "g":  # an int64 parameter: (launch, parameter, draw, field)
                        draw_params.append((n, where[p][1], a[1], a[2]))
            for a in argspec:
                if a[0] == "g":
                    increments[a[1]] = a[3]
        draws = ([increments[d] for d in range(len(increments))], draw_params)
        return self.outs, self.temps, cuda_launches, (tuple(py_plan), self.checks), len(py_plan), draws

    def cuda_fields(self, n: int) -> dict:
        """Launch ``n``'s argument position -> ("param", index, bytes) or ("patch", index) on the CUDA primitive."""
        launcher, compiled, grid, _, argspec, args = self.launches[n]
        return _cuda_launch(launcher, compiled, grid, args, argspec)[1]


class _Ref(int):
    """A number of a size-generic plan's Python replay: the index of its value among the call's computed numbers."""


def _with_refs(spec, refs, n, p):
    if spec[0] == "c":
        return ("r", refs[("arg", n, p)]) if ("arg", n, p) in refs else spec
    if spec[0] == "g":
        return spec
    _, kind, index, delta, dtype, shape, strides = spec
    delta = _Ref(refs[("delta", n, p)]) if ("delta", n, p) in refs else delta
    shape = tuple(_Ref(refs[("tshape", n, p, d)]) if ("tshape", n, p, d) in refs else s for d, s in enumerate(shape))
    strides = tuple(_Ref(refs[("tstride", n, p, d)]) if ("tstride", n, p, d) in refs else s
                    for d, s in enumerate(strides))
    return ("t", kind, index, delta, dtype, shape, strides)


def record_call(impl, keyset, args, kwargs, call, calls, primitive, overload):
    """Run ``impl`` (the registration wrapper) for a new call signature of ``overload`` (``call``: its tensors,
    key words and their descriptions, whether it is a list call and whether it needs an autograd graph, whose node
    then joins the plan spec); returns (result, plan spec, :class:`Plan`), or (result, a str) for "this
    signature stays in Python" (the reason, also kept in :data:`python_reasons`) or (result, None) for "decide
    again next time"."""
    if torch.cuda.is_available() and torch.cuda.is_current_stream_capturing():
        note(overload, "a new signature during CUDA graph capture (recorded outside capture only)")
        return impl(keyset, *args, **kwargs), None  # the state checks below are not capture-safe
    served = calls[0] + 1
    rng = _rng_states()
    recording = Recording(call[0], primitive)
    with recording:
        result = impl(keyset, *args, **kwargs)
    if calls[0] != served:
        return result, _python_only(overload, "ATen served it (a fallback)")  # the same signature falls back again
    after = _rng_states()
    with registration.aten_only():  # torch.equal is a gems operator too: it would be recorded in turn
        moved = len(after) != len(rng) or not _moved_only_by(recording.draws, rng, after)
    if moved:
        return result, _python_only(overload, "it moved a random generator other than by the Philox keys it took "
                                              "from the default one (a replay would repeat its numbers)")
    if recording.deferred:
        note(overload, "a kernel was tuned for its size class (the next call of the signature is recorded)")
        return result, None
    graph = None
    try:
        if len(call) > 4 and call[4]:  # the call needs an autograd graph: the plan builds its node too
            from gems.native import autograd_record

            graph = autograd_record.Graph.of(recording, result, overload)
        plan = recording.plan(result, graph.keep if graph is not None else ())
        if plan is None:
            return result, _python_only(overload, recording.why_python)
        spec = plan.spec(primitive)
        if graph is not None:
            spec += (graph.spec(plan),)
        if recording.reads:  # a plan with a host read: read variants of an exact plan, no size-generic one
            return result, read_variants(recording, plan, spec, overload, args, kwargs, primitive)
    except NotYet as exc:
        note(overload, str(exc))
        return result, None
    except NotRecordable as exc:
        return result, _python_only(overload, str(exc))
    return result, spec, plan  # gems.native.record_call notes the call once it knows about its family


def _python_only(overload: str, why: str) -> str:
    note(overload, why)
    return why


def _moved_only_by(draws, before: list, after: list) -> bool:
    """Whether the generators went from ``before`` to ``after`` (:func:`_rng_states`) exactly as taking the
    recorded keys moves them: one 64-bit draw each from the CPU's Mersenne Twister, ``increment`` more words
    of a CUDA generator's Philox offset. Called under ``aten_only``."""
    expected = list(before)
    cuda = torch.cuda.default_generators if len(before) > 1 else ()
    for generator, increment in draws:
        index = 0 if generator is torch.default_generator else next(
            (1 + k for k, g in enumerate(cuda) if g is generator), None)
        if index is None:
            return False
        scratch = torch.Generator(device=generator.device)
        scratch.set_state(expected[index])
        if index == 0:
            torch.empty((), dtype=torch.int64).random_(generator=scratch)
        else:  # unreached on the interpreter: CUDA's generator
            scratch.set_offset(scratch.get_offset() + increment)
        expected[index] = scratch.get_state()
    return all(torch.equal(a, b) for a, b in zip(expected, after))


def _rng_states() -> list:
    states = [torch.default_generator.get_state()]
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        states += [g.get_state() for g in torch.cuda.default_generators]
    return states


def _dense_nbytes(t: torch.Tensor) -> int:
    if t.numel() == 0:
        return 0
    return (1 + sum((size - 1) * stride for size, stride in zip(t.shape, t.stride()))) * t.element_size()


def flags_clear(flags: torch.Tensor) -> bool:
    """Whether every element of ``flags`` (written by the call's kernels, nonzero where their check passed) is
    nonzero, read on the host: how a call checks values where kernels are interpreted (their device asserts are
    off). While the native layer records the call, the plan keeps the check and its replay reads the flags again;
    a dry run (whose launches did not run) reads nothing."""
    recording = registration.recording
    if recording is None:
        return _all_set(flags)
    recording.checks.append(flags)
    if recording.dry:
        return True
    with recording.paused():
        return _all_set(flags)


def _all_set(flags: torch.Tensor) -> bool:
    # Read on the host; the transfer is the device's own copy (through gems' _to_copy it would be a fallback).
    with registration.aten_only():
        return bool(flags.cpu().numpy().all())


def replay(py_plan, inputs, outputs, temps, values) -> bool:
    """The Python launch primitive: rebuild each launch's arguments and launch through its Launcher; ``values``
    are a size-generic plan's numbers for this call (empty for an exact plan). False when a host check of the
    plan fails (C++ then serves the call in Python, which raises the error)."""
    groups = (inputs, outputs, temps)
    launches, checks = py_plan
    keys = _fresh_keys(launches)
    for launcher, grid, options, argspec in launches:
        if values:
            grid = tuple(values[g] if type(g) is _Ref else g for g in grid)
        args = [a[1] if a[0] == "c" else values[a[1]] if a[0] == "r" else keys[a[1]][a[2]] if a[0] == "g"
                else _tensor(groups, a, values) for a in argspec]
        launcher(grid, *args, **options)
    return all(_all_set(_tensor(groups, c, values)) for c in checks)


def _fresh_keys(py_plan) -> dict:
    """draw -> (seed, offset): the Philox keys a replay takes, in the recorded call's order."""
    draws = {a[1]: (a[3], a[4]) for *_, argspec in py_plan for a in argspec if a[0] == "g"}
    if not draws:
        return draws
    from gems.ops.random.philox import philox_key  # the operators import the runtime, not the reverse

    return {d: philox_key(draws[d][1], None, draws[d][0])[:2] for d in sorted(draws)}


def _tensor(groups, spec, values):
    _, kind, index, delta, dtype, shape, stride = spec
    if values:
        delta = values[delta] if type(delta) is _Ref else delta
        shape = tuple(values[s] if type(s) is _Ref else s for s in shape)
        stride = tuple(values[s] if type(s) is _Ref else s for s in stride)
    base = groups[kind][index]
    if delta == 0 and base.dtype is dtype and tuple(base.shape) == shape and tuple(base.stride()) == stride:
        return base
    if base.dtype is not dtype:  # a temporary buffer (bytes) or a reinterpreted result (0-d: as one element)
        base = (base.reshape(1) if base.dim() == 0 else base).view(dtype)
    return base.as_strided(shape, stride, base.storage_offset() + delta // base.element_size())
