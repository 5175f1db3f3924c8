"""The native dispatch layer: known calls served from C++ without entering Python.

Each overload gems registers at the vendor's dispatch key gets one generic boxed C++ kernel
(``dispatch.cpp``). It computes the call's signature from the argument stack and replays the launch
plan recorded for it; the first call of a signature runs the Python implementation, which
:mod:`gems.native.record` watches to build the plan. docs/native.md has the design and what
invalidates a plan.

The extension is built with ``torch.utils.cpp_extension`` on first use into the gems cache
directory (no CUDA toolkit needed), once per binary: the cache is keyed by what changes it (the source,
torch's build, the Python ABI, the machine and the compiler), not by the checkout or virtual environment,
so another venv with the same torch loads the same build. ``GEMS_NATIVE=0`` turns the layer off,
``GEMS_NATIVE_GENERIC=0`` its size-generic plans only. If it cannot be built or loaded, gems says why once
(:func:`status`) and the Python path serves every call.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import io
import os
import platform
import shutil
import sys
import time
import warnings
from pathlib import Path

import torch

SOURCE = Path(__file__).with_name("dispatch.cpp")  # the module; it binds lists.cpp's functions too
LISTS_SOURCE = Path(__file__).with_name("lists.cpp")
LIST_PLANS_HEADER = Path(__file__).with_name("list_plans.h")  # included by dispatch.cpp
READ_PLANS_HEADER = Path(__file__).with_name("read_plans.h")  # included by dispatch.cpp
AUTOGRAD_SOURCE = Path(__file__).with_name("autograd_node.cpp")  # training-mode replays' autograd node
AUTOGRAD_HEADER = Path(__file__).with_name("autograd_node.h")
_CFLAGS = ["-O2"]
# The launch primitive per device type: a C++ cuLaunchKernel of the Triton-compiled function, or a
# call back into Python (the interpreter, and any device without a native primitive yet).
_PRIMITIVES = {"cuda": "cuda"}

_ext = None
_status = {"active": False, "reason": "not started: the native layer loads when gems first registers an operator",
           "primitive": None, "build_seconds": None, "build_dir": None}
_configured_for = None  # (device, primitive) the extension is configured for
_slots: dict[str, int] = {}
_registered_as: dict[str, tuple] = {}  # overload -> (implementation, dispatch key) of its latest registration


def status() -> dict:
    """{'active': bool, 'reason': why not ('' when active), 'primitive', 'build_seconds', 'build_dir'}."""
    return dict(_status)


def _cache_dir() -> Path:
    return Path(os.environ.get("GEMS_CACHE_DIR", Path.home() / ".cache" / "gems")) / "native"


def _inactive(reason: str) -> None:
    _status.update(active=False, reason=reason)
    warnings.warn(f"gems: the native dispatch layer is off ({reason}); every gems call takes the slower Python "
                  "path", RuntimeWarning, stacklevel=3)


def _build_tag(source: bytes) -> str:
    """What changes the binary: the source, torch's build (its headers and ABI), the Python ABI, the machine,
    the compiler and flags. Not the paths of a checkout or venv (those only appear in ninja's command)."""
    parts = [source, torch.__version__, str(torch.version.git_version), sys.implementation.cache_tag,
             platform.machine(), os.environ.get("CXX", "c++"), " ".join(_CFLAGS)]
    return hashlib.sha256(b"\0".join(p if isinstance(p, bytes) else p.encode() for p in parts)).hexdigest()[:12]


def sources() -> tuple:
    """What the build hashes (all) and compiles (the .cpp files)."""
    return SOURCE, LISTS_SOURCE, LIST_PLANS_HEADER, READ_PLANS_HEADER, AUTOGRAD_SOURCE, AUTOGRAD_HEADER


def _build():
    cxx = os.environ.get("CXX", "c++")
    files = {path.name: path.read_bytes() for path in sources()}
    tag = _build_tag(b"\0".join(files.values()))
    name = f"gems_native_{tag}"
    build_dir = _cache_dir() / tag
    library, stamp = build_dir / f"{name}.so", build_dir / "built"
    _status["build_dir"] = str(build_dir)
    if stamp.is_file() and library.is_file():  # built before, from any checkout or venv with this torch
        try:
            return _import(name, library), ""
        except ImportError:
            stamp.unlink(missing_ok=True)  # stale or damaged: build again
    if shutil.which(cxx) is None:
        return None, f"no C++ compiler: `{cxx}` is not on PATH; install g++ (or set CXX) to get the native layer"
    from torch.utils.cpp_extension import is_ninja_available, load

    if not is_ninja_available():
        return None, "ninja is not installed (torch.utils.cpp_extension needs it): pip install ninja"
    build_dir.mkdir(parents=True, exist_ok=True)
    log = build_dir / "build.log"
    # ninja rebuilds when the compile command changes, and the command names the source: compiling a copy
    # in the build directory lets every checkout of the same source (worktrees, CI's scratch copy of the
    # simulated-device example) share one build instead of rebuilding for its own path.
    for file_name, source in files.items():
        staged = build_dir / file_name
        if not staged.is_file() or staged.read_bytes() != source:
            partial = staged.with_name(f"{staged.name}.{os.getpid()}.tmp")
            partial.write_bytes(source)
            partial.replace(staged)
    print("gems: building the native layer (first use, ~30 s)", file=sys.stderr, flush=True)
    started = time.perf_counter()
    output = io.StringIO()
    try:
        with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
            ext = load(name, [str(build_dir / n) for n in files if n.endswith(".cpp")], extra_cflags=_CFLAGS,
                       build_directory=str(build_dir), verbose=False)
    except Exception as exc:  # a compiler error, a missing header, an ABI mismatch: all mean "Python path"
        log.write_text(f"{output.getvalue()}\n{type(exc).__name__}: {exc}\n")
        return None, f"the C++ extension failed to build or load ({type(exc).__name__}); log: {log}"
    _status["build_seconds"] = round(time.perf_counter() - started, 1)
    stamp.write_text(tag)
    return ext, ""


def _import(name: str, library: Path):
    spec = importlib.util.spec_from_file_location(name, library)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load(device: str):
    """The extension configured for ``device`` (the vendor's torch device type), or None with the
    reason in :func:`status`, said once."""
    global _ext, _configured_for
    primitive = _PRIMITIVES.get(device, "python")
    if device == "cuda" and torch.version.hip:
        primitive = "python"
    if _configured_for == (device, primitive):
        return _ext
    if os.environ.get("GEMS_NATIVE", "1") == "0":
        _configured_for = (device, primitive)
        _status.update(active=False, reason="turned off by GEMS_NATIVE=0")
        return None
    if _ext is None and _status["build_seconds"] is None:
        _ext, reason = _build()
        if _ext is None:
            _configured_for = (device, primitive)
            _inactive(reason)
            return None
    if _ext is None:
        return None
    from gems.native import record

    problem = _ext.configure(primitive, device, record.replay)
    _configured_for = (device, primitive)
    if problem:
        _inactive(f"launch primitive {primitive!r}: {problem}")
        return None
    _status.update(active=True, reason="", primitive=primitive)
    return _ext


class _Handle:
    """What registration keeps for a natively registered overload (like torch.library.Library)."""

    def __init__(self, handle: int):
        self.handle = handle

    def _destroy(self):
        _ext.deregister(self.handle)


def register(overload: str, dispatch_key: str, device: str, serve, implementation=None, operator: str | None = None):
    """Register the native kernel for ``overload`` at ``dispatch_key`` (the vendor's key, or its Autograd key for
    an overload with its own backward); ``serve(keyset, args, kwargs, call, why)`` runs a call in Python: ``call``
    (tensors, key words, their descriptions) for a new signature, which it records (returning (result, plan spec
    or reason str or None[, size-generic spec])), else None with ``why`` the reason. None when the layer is off.
    The plans recorded for ``overload`` stay valid when the same ``implementation`` is registered again at the
    same key; any other registration starts afresh. ``operator``: the schema name when ``overload`` is not an
    ATen overload's name ("gems::skip_layer_norm" for gems.fused's; counts and reasons stay under ``overload``)."""
    ext = load(device)
    if ext is None:
        return None
    slot = _slots.get(overload)
    if slot is None:
        slot = _slots[overload] = ext.new_slot(overload)
    same = implementation is not None and _registered_as.get(overload) == (implementation, dispatch_key)
    _registered_as[overload] = (implementation, dispatch_key)
    # Multi-tensor overloads key their tensor lists by summary and replay list plans (list_plans.h).
    lists = overload.startswith(("_foreach_", "_fused_"))
    per_call = []
    if lists:
        from gems.native import list_record

        per_call = list_record.declare(overload, getattr(implementation, "per_call_scalars", ()))
    return _Handle(ext.register_kernel(slot, operator or overload, dispatch_key, serve, same, lists, per_call))


def record_call(impl, keyset, args, kwargs, call, calls, overload):
    """Run a new call signature of ``overload`` through ``impl`` (the registration wrapper) and record it as a
    plan (and, for a second size of a family, a size-generic plan)."""
    from gems.native import generic, record

    primitive = status()["primitive"]
    if call[3]:  # a call over tensor lists (list_plans.h)
        from gems.native import list_record

        return list_record.record_list_call(impl, keyset, args, kwargs, call, calls, primitive, overload)
    outcome = record.record_call(impl, keyset, args, kwargs, call, calls, primitive, overload)
    if len(outcome) == 2:
        return outcome
    if call[4]:  # a call that needs an autograd graph: exact plans only (its plan builds the node)
        record.note(overload, record.NEW_SIGNATURE)
        return outcome[:2]
    result, spec, plan = outcome
    generic_spec, why = generic.observe(overload, call, plan, args, kwargs, primitive)
    record.note(overload, why)
    return result, spec, generic_spec


def note(overload: str, why: str) -> None:
    """A call of ``overload`` left the native path for the reason ``why`` (the C++ side says which)."""
    from gems.native import record

    record.note(overload, why)


def extension():
    """The built C++ extension (its list helpers, lists.cpp, serve gems/ops/optim), or None where it is not."""
    return _ext


def aten_only_add(delta: int) -> None:
    if _ext is not None:
        _ext.aten_only_add(delta)


def _counts() -> list:
    return _ext.counts() if _ext is not None else []


def call_counts() -> dict:
    """overload -> calls served by replaying a plan (no Python) since the last reset, size-generic plans included."""
    return {overload: hits for overload, hits, _ in _ext.active_counts() if hits} if _ext is not None else {}


def calls_of(overload: str) -> int:
    """call_counts()[overload] without listing every overload (the harness asks around every call)."""
    return _ext.hits_of(overload) if _ext is not None else 0


def generic_counts() -> dict:
    """overload -> calls served by a size-generic plan (a new size of a known family) since the last reset."""
    return {overload: hits for overload, _, _, _, hits, _ in _counts() if hits}


def launch_counts() -> dict:
    """overload -> kernels launched by plan replays since the last reset."""
    return {overload: launches for overload, _, launches in _ext.active_counts() if launches} if _ext is not None \
        else {}


def plan_counts() -> dict:
    """overload -> exact plans stored for its current registration (Python-only entries included)."""
    return {overload: plans for overload, _, _, plans, _, _ in _counts() if plans}


def generic_plan_counts() -> dict:
    """overload -> size-generic plans stored for its current registration."""
    return {overload: plans for overload, *_, plans in _counts() if plans}


def python_reasons() -> dict:
    """overload -> why the latest of its calls that left the native path did: the first call of a signature,
    a new size of a family with no size-generic plan (and why not), an ATen op that computes, a view result,
    a fallback, random numbers drawn, an argument the key cannot hold, autograd needing a graph..."""
    from gems.native import record

    return dict(record.python_reasons)


def python_calls() -> dict:
    """overload -> {reason: calls} of every call that took the Python path since the last reset."""
    from gems.native import record

    calls: dict = {}
    for (overload, why), n in record.python_calls.items():
        calls.setdefault(overload, {})[why] = n
    return calls


def reset_counts() -> None:
    from gems.native import record

    record.python_calls.clear()
    if _ext is not None:
        _ext.reset_counts()


def invalidate() -> None:
    """Forget every stored plan: the next call of each signature runs in Python and records again."""
    from gems.native import generic, record

    record.python_reasons.clear()
    generic.forget()
    if _ext is not None:
        _ext.invalidate()
