"""An exact memo of interpreter launches, for conformance's warm call.

Conformance runs every case twice on fresh copies of the same inputs: cold, then warm, whose outputs must be
bit-identical (gems/testing/conformance.py; the warm call is the native layer's replay of the plan the cold
call recorded). Under the Triton interpreter most of a case's time is the kernels' emulation, so the warm
call doubled it. Yet there a launch is a pure function of what it is given: the kernel, its grid and
options, every non-tensor argument, and for every tensor argument its dtype, shape, strides, storage offset
and the bytes of its whole storage *before* the launch (outputs included: a kernel may read what it then
writes, and the interpreter hands it whole storages). Programs run one after another in a fixed order, so
atomics and ``tl.rand`` (a function of the seed and offsets it is given) are deterministic too.

While a case runs cold, :class:`LaunchMemo` keys each launch by all of that, and keeps the bytes of every
storage the launch was given, as they are after it. In the warm call a launch with the same key gets those
bytes written instead of being interpreted; a launch that differs in anything (another input byte, offset,
scalar, random seed, grid, aliasing between its arguments) misses and runs. A hit writes what the
interpreter would have written, so the warm check still catches a replay that launches something else.
What the native layer does before the launch (keying, plan lookup, allocation, argument rebuild) still
runs for real in the warm call: only the interpreter's execution of an identical launch is skipped.

What the key covers, and why:

- tensors that share storage (in-place, views of one buffer) are keyed by which storage each is and where
  in it, so ``f(x, x)`` and ``f(x, copy_of_x)`` are different launches;
- uninitialized memory (``torch.empty`` outputs, a temporary buffer, a strided sample's gaps) would make
  every key differ between the cold and warm calls: while a memo is on, the CPU allocator fills new
  memory with a fixed pattern (c10's ``caffe2_cpu_allocator_do_junk_fill``: NaN as a float, a large
  integer otherwise), the same in both calls. Without that flag (another torch build) the memo misses
  more, and is never wrong;
- an autotuned launch (its grid a function of the config) is keyed when the autotuner has one config and
  no config hook, as under the interpreter (which cannot benchmark): Triton then runs exactly that config,
  so the config and the grid its function gives there join the key. With several configs the choice is a
  benchmark's, and such a launch runs;
- arguments of any other type (tensor descriptors, lists, objects), or a launch that returns something:
  not memoised, they run;
- a kernel that reads memory through addresses stored in a tensor argument (the optimizer family's row
  tables, gems/ops/optim/multi_tensor.py; such a kernel carries the attribute ``gems_address_table``): not
  memoised, it runs, since no key of its arguments covers that memory. Every other Triton kernel reads
  memory only through its arguments.

Nothing is shared between cases: :func:`case` makes a fresh memo for one case and removes it afterwards.
``GEMS_LAUNCH_MEMO=0`` turns it off (every warm launch runs).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import struct
from collections import Counter

import torch
import triton
from triton.runtime.autotuner import Autotuner

from gems.runtime import launch, registration

# What one case may hold (the bytes before and after its launches); past it, later launches run unmemoised.
_LIMIT_BYTES = 256 << 20
# Argument types keyed by value (with their type: True and 1 are different launches).
_VALUES = (int, bool, str, type(None), torch.dtype)
# Launches of every memo of this process so far: "recorded", "hits", "misses", "unkeyed".
totals: Counter = Counter()


class LaunchMemo:
    """One case's launches: recorded while cold, looked up while :meth:`replay` is on."""

    def __init__(self):
        self.entries: dict = {}
        self._kernels = {}  # keys name kernels by id(): each held, so that no other kernel can take its id
        self.replaying = self.done = False
        self.held = 0  # bytes kept
        self.hits = self.misses = self.recorded = self.unkeyed = 0

    @contextlib.contextmanager
    def replay(self):
        """The warm call: launches already seen are served from the memo; the memo ends with the block."""
        self.replaying = True
        try:
            yield self
        finally:
            self.done = True

    def launch(self, launcher, grid, args, options):
        """``launcher._run_plain(grid, args, options)``, or its recorded effect."""
        if self.done:
            return launcher._run_plain(grid, args, options)
        keyed = _key(launcher.kernel, grid, args, options)
        if keyed is None:
            self.unkeyed += 1
            return launcher._run_plain(grid, args, options)
        key, storages = keyed
        if self.replaying:
            after = self.entries.get(key)
            if after is None:
                self.misses += 1
                return launcher._run_plain(grid, args, options)
            self.hits += 1
            for storage, data in zip(storages, after):
                _write(storage, data)
            return None
        result = launcher._run_plain(grid, args, options)
        size = 2 * sum(s.nbytes() for s in storages)
        if result is None and key not in self.entries and self.held + size <= _LIMIT_BYTES:
            self._kernels[id(launcher.kernel)] = launcher.kernel
            self.entries[key] = tuple(_read(s) for s in storages)
            self.held += size
            self.recorded += 1
        return result


def _key(kernel, grid, args, options):
    """(key, the distinct storages of the tensor arguments in order), or None if not memoisable."""
    if getattr(kernel, "gems_address_table", False):
        return None
    if callable(grid):
        known = _autotuned(kernel, grid, args)
        if known is None:
            return None
        grid, config = known
        options = {**options, "autotuned config": config}
    parts, storages, where = [], [], {}
    for a in args:
        if type(a) is torch.Tensor:
            storage = a.untyped_storage()
            identity = (storage.data_ptr(), storage.nbytes())
            index = where.get(identity)
            if index is None:
                index = where[identity] = len(storages)
                storages.append(storage)
            parts.append((index, a.dtype, tuple(a.shape), a.stride(), a.storage_offset(), a.device, a.is_conj(),
                          a.is_neg()))
        else:
            value = _value(a)
            if value is None:
                return None
            parts.append(value)
    contents = tuple((s.device, s.nbytes(), s.data_ptr() % 64, _read(s)) for s in storages)
    return (id(kernel), tuple(grid), tuple(sorted(options.items())), tuple(parts), contents), storages


def _autotuned(kernel, grid, args):
    """(the grid, the config as a hashable value) of a launch of a one-config autotuner, or None."""
    configs = getattr(kernel, "configs", None)
    if not isinstance(kernel, Autotuner) or len(configs) != 1 or configs[0].pre_hook is not None:
        return None
    settings = configs[0].all_kwargs()
    config = _value(tuple(sorted(settings.items())))
    try:  # what Triton's launch hands the grid function: the arguments by name and the config's values
        grid = grid({**dict(zip(kernel.arg_names, args)), **settings})
    except KeyError:
        return None
    if config is None or not all(type(g) is int for g in grid):
        return None
    return tuple(grid), config


def _value(a):
    """A hashable stand-in for a non-tensor argument, exact to the bit, or None."""
    if type(a) is float:
        return float, struct.pack("<d", a)  # -0.0 and 0.0 differ; so do NaN payloads
    if type(a) in _VALUES:
        return type(a), a
    if isinstance(a, triton.language.dtype):
        return "tl.dtype", a.name
    if type(a) is tuple:
        values = tuple(_value(v) for v in a)
        return None if None in values else (tuple, values)
    return None


def _read(storage) -> bytes:
    if storage.device.type == "cpu":
        return ctypes.string_at(storage.data_ptr(), storage.nbytes()) if storage.nbytes() else b""
    with registration.aten_only():  # the device's own copy, as the interpreter makes it
        return _read(storage.cpu())


def _write(storage, data: bytes) -> None:
    if not data:
        return
    if storage.device.type == "cpu":
        ctypes.memmove(storage.data_ptr(), data, len(data))
        return
    with registration.aten_only():
        storage.copy_(torch.UntypedStorage.from_buffer(data, dtype=torch.uint8))


def enabled() -> bool:
    return bool(triton.knobs.runtime.interpret) and os.environ.get("GEMS_LAUNCH_MEMO", "1") != "0"


def _junk_fill_flag():
    """c10's flag that makes the CPU allocator fill new memory with a fixed pattern, or None."""
    try:
        lib = ctypes.CDLL(os.path.join(os.path.dirname(torch.__file__), "lib", "libc10.so"))
        return ctypes.c_bool.in_dll(lib, "FLAGS_caffe2_cpu_allocator_do_junk_fill")
    except (OSError, ValueError):
        return None


@contextlib.contextmanager
def case():
    """Around one conformance case: a fresh memo in the launcher's hook (None when off)."""
    if not enabled():
        yield None
        return
    memo, fill = LaunchMemo(), _junk_fill_flag()
    previous, filled = launch.memo, fill is not None and fill.value
    launch.memo = memo
    if fill is not None:
        fill.value = True
    try:
        yield memo
    finally:
        launch.memo = previous
        totals.update(recorded=memo.recorded, hits=memo.hits, misses=memo.misses, unkeyed=memo.unkeyed)
        if fill is not None:
            fill.value = filled
