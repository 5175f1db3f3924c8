"""Small int64 tables (an optimizer step's tensor table, a tensor's sizes) uploaded to the device once and
reused: a kernel that reads such a table would otherwise pay a host-to-device copy per call, and a copy from
pageable memory waits for the stream (it made ``x[mask]`` 7x slower than ATen's on an H200).

A new table is copied from pinned memory without waiting. Its pinned source is let go once the copy is queued:
torch's caching host allocator records the copy's event on it and hands the block out again only after the copy
has read it, so new tables reuse a few pinned blocks; keeping each source alive with its table pinned fresh memory
(cudaHostAlloc, slow) for every new table. A table a captured CUDA graph reads is kept with its source for the life
of the process (each replay of the graph copies it again). The native layer's list plans keep their own cache of
the same kind (gems/native/list_plans.h); :func:`counts` adds both up."""

from __future__ import annotations

import contextlib
from collections import OrderedDict

import torch

from gems import native
from gems.runtime import registration

# Cached tables per process; an optimizer step uses a few dozen.
_CACHE_SIZE = 256
_tables: OrderedDict = OrderedDict()
_kept: dict = {}  # tables a captured CUDA graph reads, with their pinned sources: never freed
_counts = {"hits": 0, "uploads": 0}  # this module's, since the last reset_counts()


def upload(words, device: torch.device) -> torch.Tensor:
    """The int64 tensor of ``words`` on ``device``, cached by content."""
    return upload_cached((device, tuple(words)), lambda: torch.tensor(words, dtype=torch.int64), device)


def key_table(words, device: torch.device) -> torch.Tensor:
    """:func:`upload` of words that follow from the call's signature alone (a tensor's sizes): a recorded plan
    keeps the table as a constant (gems.runtime.registration.KEY_TABLE)."""
    recording = registration.recording
    with recording.paused() if recording is not None else contextlib.nullcontext():  # its copy is no call's work
        table = upload(words, device)
    setattr(table, registration.KEY_TABLE, True)
    return table


def upload_cached(key, make_host, device: torch.device) -> torch.Tensor:
    """The device copy of ``make_host()`` (a CPU tensor), made once per ``key``: pinned and copied without
    waiting on CUDA."""
    capturing = device.type == "cuda" and torch.cuda.is_current_stream_capturing()
    cached = _tables.get(key)
    if cached is not None:
        _counts["hits"] += 1
        _tables.move_to_end(key)
        if capturing:  # unreached on the interpreter: CUDA graph capture
            _kept.setdefault(key, (cached, None))  # an earlier capture's entry keeps the source its copy reads
        return cached
    _counts["uploads"] += 1
    host = make_host()
    if device.type == "cpu":
        on_device = host
    else:
        # A transfer is ATen's: through gems' own _to_copy and copy_ it would take the Python path's Fallback.
        with registration.aten_only():
            if device.type == "cuda":  # unreached on the interpreter: its tensors are on the CPU
                host = host.pin_memory()  # unreached on the interpreter: CUDA
                on_device = host.to(device, non_blocking=True)  # unreached on the interpreter: CUDA
            else:
                on_device = host.to(device)  # unreached on the interpreter: its tensors are on the CPU
    _tables[key] = on_device
    if capturing:  # unreached on the interpreter: CUDA graph capture
        _kept[key] = (on_device, host)
    if len(_tables) > _CACHE_SIZE:
        _tables.popitem(last=False)
    return on_device


def counts() -> dict:
    """{"hits": tables found in a cache, "uploads": tables copied to the device} since :func:`reset_counts`, by
    the Python path (this module) and the native layer's list-plan replays together."""
    ext = native.extension()
    hits, uploads = ext.table_counts(False) if ext is not None else (0, 0)
    return {"hits": _counts["hits"] + hits, "uploads": _counts["uploads"] + uploads}


def reset_counts() -> None:
    ext = native.extension()
    if ext is not None:
        ext.table_counts(True)
    _counts.update(hits=0, uploads=0)
