"""What ran where: every ATen overload dispatched on the vendor's device, and who served it.

    import gems
    with gems.trace() as t:                  # gems registered as it is (gems.enable() / use_gems())
        model(x)
    print(t.table())                         # overload, calls, gems kernel / fallback (why) / not registered
    t.to_csv("trace.csv"); t.to_json("trace.json")

    python -m gems.tracing [--vendor V] [--csv F] [--json F] script.py [args...]   # gems-trace, the same

``gems.call_counts()`` only knows the operators gems declares; a trace also lists what ran ATen's
kernel because gems does not register it (layer_norm, cumsum, mm... until they are served). It
records what reaches the backend: composite operators appear as what they decompose into (layer_norm
as native_layer_norm), which is what a kernel library has to serve. Calls an implementation makes
inside itself are not listed (they are part of serving the outer call).

Each row has a kind: ``compute`` (a kernel must compute it: what a vendor has to serve), ``view``
(a new view of existing memory: detach, t, expand...), ``metadata`` (allocation, a read-back to the host,
no-ops: nothing to compute) or ``transfer`` (a copy between the device and another one). Shares of calls
served by gems count compute calls only (:meth:`Trace.compute_share`).
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from dataclasses import dataclass, field

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from gems.runtime import registration, selection

GEMS, FALLBACK, ATEN_ONLY, NOT_REGISTERED = "gems", "fallback", "aten", "not registered"
COMPUTE, VIEW, METADATA, TRANSFER = "compute", "view", "metadata", "transfer"
KINDS = (COMPUTE, VIEW, METADATA, TRANSFER)

# Overloads that compute nothing although their schema returns a fresh tensor: allocations (the contents are
# undefined), the host read-back of a 0-d value, and the no-ops around constants and shapes.
_METADATA = frozenset({
    "empty.memory_format", "empty_strided", "new_empty", "new_empty_strided", "empty_like", "_unsafe_view",
    "_local_scalar_dense", "lift_fresh", "resize_", "set_.source_Storage", "set_.source_Storage_storage_offset",
    "set_.source_Tensor", "record_stream", "_reshape_alias", "is_pinned", "_pin_memory",
})


def call_kind(func, overload: str, device_type: str, args, kwargs, result) -> str:
    """compute, view, metadata or transfer (see the module docstring)."""
    if overload in _METADATA:
        return METADATA
    if getattr(func, "is_view", False):
        return VIEW
    devices = {t.device.type for t in _tensors((args, kwargs, result))}
    if len(devices) > 1 and device_type in devices:
        return TRANSFER
    return COMPUTE


def _tensors(value):
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _tensors(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _tensors(v)


@dataclass
class TraceRow:
    overload: str
    kind: str = COMPUTE
    calls: int = 0
    served: Counter = field(default_factory=Counter)  # GEMS / FALLBACK / ATEN_ONLY / NOT_REGISTERED -> calls
    fallback_reasons: Counter = field(default_factory=Counter)

    @property
    def verdict(self) -> str:
        """gems when every call ran a gems kernel; otherwise the other outcomes, most frequent first."""
        return ", ".join(f"{what} x{n}" if len(self.served) > 1 else what for what, n in self.served.most_common())

    def as_dict(self) -> dict:
        return {"overload": self.overload, "kind": self.kind, "calls": self.calls, **{k: self.served[k] for k in
                (GEMS, FALLBACK, ATEN_ONLY, NOT_REGISTERED)},
                "fallback_reasons": "; ".join(f"{why} (x{n})" for why, n in self.fallback_reasons.items())}


def _overload_name(func) -> str:
    name = func.name().removeprefix("aten::")
    return name.removesuffix(".default")


def _on_device(value, device_type: str) -> bool:
    if isinstance(value, torch.Tensor):
        return value.device.type == device_type
    if isinstance(value, (list, tuple)):
        return any(_on_device(v, device_type) for v in value)
    if isinstance(value, dict):
        return any(_on_device(v, device_type) for v in value.values())
    return False


class Trace(TorchDispatchMode):
    """A dispatch mode that counts each ATen overload reaching the backend on the vendor's device."""

    def __init__(self, device_type: str | None = None):
        super().__init__()
        self.device_type = device_type or selection.current().device
        self.rows: dict[str, TraceRow] = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        overload = _overload_name(func)
        gems_before = registration.gems_calls[overload]
        fallbacks_before = {k: n for k, n in registration.fallback_calls.items() if k[0] == overload}
        result = func(*args, **kwargs)
        if not (_on_device(args, self.device_type) or _on_device(kwargs, self.device_type)
                or _on_device(result, self.device_type)):
            return result
        kind = call_kind(func, overload, self.device_type, args, kwargs, result)
        key = overload if kind != TRANSFER else f"{overload} (transfer)"
        row = self.rows.get(key) or self.rows.setdefault(key, TraceRow(key, kind))
        row.calls += 1
        new_fallbacks = {k[1]: n - fallbacks_before.get(k, 0) for k, n in registration.fallback_calls.items()
                         if k[0] == overload and n > fallbacks_before.get(k, 0)}
        if registration.gems_calls[overload] > gems_before:
            row.served[GEMS] += 1
        elif new_fallbacks:
            row.served[FALLBACK] += 1
            row.fallback_reasons.update(new_fallbacks)
        elif overload in registration.registered_ops():
            row.served[ATEN_ONLY] += 1  # registered, but ATen ran it (inside gems.aten_only())
        else:
            row.served[NOT_REGISTERED] += 1
        return result

    # ---------------------------------------------------------------- outputs
    def summary(self) -> list[dict]:
        """One dict per overload, most called first."""
        return [r.as_dict() for r in sorted(self.rows.values(), key=lambda r: (-r.calls, r.overload))]

    def compute_share(self) -> tuple[int, int]:
        """(compute calls a gems kernel served, compute calls): views, metadata and transfers left out."""
        rows = [r for r in self.rows.values() if r.kind == COMPUTE]
        return sum(r.served[GEMS] for r in rows), sum(r.calls for r in rows)

    def unserved(self) -> list[TraceRow]:
        """Compute overloads with at least one call that no gems kernel served, most called first."""
        return sorted((r for r in self.rows.values() if r.kind == COMPUTE and r.served[GEMS] < r.calls),
                      key=lambda r: (-r.calls, r.overload))

    def table(self) -> str:
        """Compute overloads first (what a kernel library must serve), then views, metadata and transfers."""
        rows = sorted(self.rows.values(), key=lambda r: (KINDS.index(r.kind), -r.calls, r.overload))
        width = max([len("overload")] + [len(r.overload) for r in rows])
        lines = [f"{'overload':<{width}}  {'kind':<8}  {'calls':>7}  served by",
                 f"{'-' * width}  {'-' * 8}  {'-' * 7}  {'-' * 9}"]
        for r in rows:
            why = "; ".join(self._reasons(r))
            served_by = f"{r.verdict} (no kernel needed)" if r.kind in (VIEW, METADATA) else r.verdict
            lines.append(f"{r.overload:<{width}}  {r.kind:<8}  {r.calls:>7}  {served_by}"
                         + (f" ({why})" if why else ""))
        served, compute = self.compute_share()
        other = sum(r.calls for r in rows) - compute
        share = f" ({100 * served / compute:.1f}%)" if compute else ""
        lines.append(f"{len(rows)} overloads on {self.device_type}: {compute} compute calls, {served} of them ran a "
                     f"gems kernel{share}, {compute - served} ran ATen's; {other} view, metadata and transfer calls")
        return "\n".join(lines)

    @staticmethod
    def _reasons(row: TraceRow) -> list[str]:
        return [why for why, _ in row.fallback_reasons.most_common()]

    def to_csv(self, path) -> None:
        rows = self.summary()
        with open(path, "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]) if rows else ["overload", "calls"])
            writer.writeheader()
            writer.writerows(rows)

    def to_json(self, path) -> None:
        with open(path, "w") as handle:
            json.dump({"device": self.device_type, "vendor": selection.current().name, "overloads": self.summary()},
                      handle, indent=1)


def trace(device_type: str | None = None) -> Trace:
    """``with gems.trace() as t:`` records every ATen overload dispatched on the vendor's device."""
    return Trace(device_type)

