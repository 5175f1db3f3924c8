"""A vendor's gate settings: ``gate.yaml`` in its backend directory, inherited along its base chain.

    perf_gating: on            # off: perf results are not read (the interpreter's timings mean nothing)
    perf_threshold_pct: 5      # block when an operator's geometric-mean speedup drops by more than this
    remeasure: auto            # re-run suspect operators before blocking: auto (on for device vendors), on, off

A vendor without a key takes its base vendor's value, then the defaults above.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gems.gate.inputs import GateInputError
from gems.runtime import selection
from gems.runtime.vendor import VendorError
from gems.yaml_file import read_mapping

FILE = "gate.yaml"
DEFAULTS = {"perf_gating": True, "perf_threshold_pct": 5.0, "remeasure": "auto"}


@dataclass(frozen=True)
class GateConfig:
    vendor: str
    device: str  # the vendor's torch device type
    perf_gating: bool
    perf_threshold_pct: float
    remeasure: bool
    sources: tuple[Path, ...]  # the gate.yaml files read, nearest vendor first


def _switch(path: Path, key: str, value, allowed_auto: bool = False):
    """YAML reads on/off as booleans already; accept the words too."""
    if isinstance(value, bool):
        return value
    words = {"on": True, "true": True, "off": False, "false": False}
    if allowed_auto:
        words["auto"] = "auto"
    if isinstance(value, str) and value.lower() in words:
        return words[value.lower()]
    raise GateInputError(f"{path}: {key} must be one of {sorted(words)}, got {value!r}")


def _read(path: Path) -> dict:
    raw = read_mapping(path, GateInputError, "a mapping of setting -> value")
    unknown = set(raw) - set(DEFAULTS)
    if unknown:
        raise GateInputError(f"{path}: unknown setting(s) {sorted(unknown)}; known: {sorted(DEFAULTS)}")
    settings = {}
    if "perf_gating" in raw:
        settings["perf_gating"] = _switch(path, "perf_gating", raw["perf_gating"])
    if "remeasure" in raw:
        settings["remeasure"] = _switch(path, "remeasure", raw["remeasure"], allowed_auto=True)
    if "perf_threshold_pct" in raw:
        value = raw["perf_threshold_pct"]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 100:
            raise GateInputError(f"{path}: perf_threshold_pct must be a number between 0 and 100, got {value!r}")
        settings["perf_threshold_pct"] = float(value)
    return settings


def load(vendor: str) -> GateConfig:
    """The vendor's settings (its gate.yaml over its base vendors' over the defaults)."""
    try:
        backend = selection.load_backend(vendor)  # imports the vendor's package only: no device query
    except VendorError as exc:
        raise GateInputError(str(exc)) from exc
    settings, sources = dict(DEFAULTS), []
    for member in reversed(list(backend.chain())):
        path = member.directory / FILE
        if path.is_file():
            settings.update(_read(path))
            sources.insert(0, path)
    remeasure = settings["remeasure"]
    if remeasure == "auto":
        remeasure = backend.device != "cpu"  # timings on a real device are worth a second look
    return GateConfig(vendor, backend.device, settings["perf_gating"], settings["perf_threshold_pct"], remeasure,
                      tuple(sources))
