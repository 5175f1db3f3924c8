"""perf/shapes.yaml: benchmark shapes per perf key and suite, checked when loaded."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

import torch

from gems.yaml_file import read_mapping

# models: the shapes of models' layers, for the operators that declare them (the blas products: the linear
# layers of Llama, BERT and ViT, issue #25); the models suite runs those operators alone unless --ops names others
# (whose cases are then "no-perf").
SUITES = ("quick", "core", "full", "models")
SIZE_CLASSES = ("small", "large")
DTYPES = {str(d).replace("torch.", ""): d for d in (
    torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.int8, torch.int16, torch.int32,
    torch.int64, torch.uint8, torch.bool, torch.complex64)}


class ShapesError(ValueError):
    """perf/shapes.yaml cannot be used; the message names the file and the entry."""


@dataclass(frozen=True)
class Shape:
    dims: tuple[int, ...]
    size_class: str  # "small": per-call timing decides the speedup; "large": kernel time

    @property
    def numel(self) -> int:
        return math.prod(self.dims)

    @property
    def text(self) -> str:
        """How the shape appears in perf.csv: "4096", "32x1024" ("scalar" for 0-d)."""
        return "x".join(str(d) for d in self.dims) if self.dims else "scalar"


def default_path() -> Path:
    """``GEMS_PERF_SHAPES``, else perf/shapes.yaml of the source checkout, else of the current directory."""
    if os.environ.get("GEMS_PERF_SHAPES"):
        return Path(os.environ["GEMS_PERF_SHAPES"])
    checkout = Path(__file__).resolve().parents[2] / "perf" / "shapes.yaml"
    return checkout if checkout.is_file() else Path("perf") / "shapes.yaml"


@dataclass(frozen=True)
class ShapeBook:
    path: Path
    dtypes_by_suite: dict
    small_max_numel: int
    keys: dict  # key -> {suite: tuple[Shape, ...]}

    def default_dtypes(self, suite: str) -> tuple:
        return self.dtypes_by_suite.get(suite, ())

    def shapes(self, key: str, suite: str) -> tuple[Shape, ...] | None:
        """The shapes of ``key`` in ``suite``, or None when the file has none (the case is "no-perf")."""
        entry = self.keys.get(key)
        return None if entry is None or suite not in entry else entry[suite]

    def of_size(self, size: str) -> ShapeBook:
        """The same book with only the shapes of one size class ("small" or "large"); a key's suite left with
        none is dropped, so its operators have no shapes in that suite."""
        keys = {}
        for key, suites in self.keys.items():
            kept = {suite: tuple(s for s in entries if s.size_class == size) for suite, entries in suites.items()}
            keys[key] = {suite: entries for suite, entries in kept.items() if entries}
        return ShapeBook(self.path, self.dtypes_by_suite, self.small_max_numel, keys)

    def why_missing(self, key: str, suite: str) -> str:
        if key not in self.keys:
            return (f"{self.path} has no shapes for perf key {key!r} (known: {', '.join(sorted(self.keys))}); "
                    f"add a '{key}:' entry under 'keys:'")
        return f"{self.path}: key {key!r} has no {suite!r} suite"


def load(path: Path | str | None = None) -> ShapeBook:
    path = Path(path) if path else default_path()
    if not path.is_file():
        raise ShapesError(f"{path}: shapes file not found (pass --shapes FILE or set GEMS_PERF_SHAPES)")
    raw = read_mapping(path, ShapesError, "a mapping with a 'keys:' section")
    if not isinstance(raw.get("keys"), dict):
        raise ShapesError(f"{path}: expected a mapping with a 'keys:' section")
    unknown = set(raw) - {"dtypes", "small_max_numel", "keys"}
    if unknown:
        raise ShapesError(f"{path}: unknown top-level field(s) {sorted(unknown)}")
    small_max = raw.get("small_max_numel", 1 << 20)
    if not isinstance(small_max, int) or small_max < 0:
        raise ShapesError(f"{path}: small_max_numel must be a non-negative integer, got {small_max!r}")
    dtypes = {}
    for suite, names in (raw.get("dtypes") or {}).items():
        where = f"{path}: dtypes.{suite}"
        if suite not in SUITES:
            raise ShapesError(f"{where}: unknown suite (known: {', '.join(SUITES)})")
        if not isinstance(names, list) or not all(n in DTYPES for n in names):
            raise ShapesError(f"{where}: expected a list of dtype names from {', '.join(DTYPES)}, got {names!r}")
        dtypes[suite] = tuple(DTYPES[n] for n in names)
    keys = {}
    for key, suites in raw["keys"].items():
        if not isinstance(suites, dict):
            raise ShapesError(f"{path}: keys.{key}: expected a mapping of suite -> list of shapes")
        keys[key] = {}
        for suite, entries in suites.items():
            where = f"{path}: keys.{key}.{suite}"
            if suite not in SUITES:
                raise ShapesError(f"{where}: unknown suite (known: {', '.join(SUITES)})")
            if not isinstance(entries, list) or not entries:
                raise ShapesError(f"{where}: expected a non-empty list of shapes")
            keys[key][suite] = tuple(_shape(entry, small_max, f"{where}[{i}]") for i, entry in enumerate(entries))
    return ShapeBook(path, dtypes, small_max, keys)


def _shape(entry, small_max: int, where: str) -> Shape:
    size = None
    if isinstance(entry, dict):
        unknown = set(entry) - {"shape", "size"}
        if unknown or "shape" not in entry:
            raise ShapesError(f"{where}: expected {{shape: [...], size: small|large}}, got {entry!r}")
        size, entry = entry.get("size"), entry["shape"]
        if size not in SIZE_CLASSES:
            raise ShapesError(f"{where}: size must be one of {SIZE_CLASSES}, got {size!r}")
    if not isinstance(entry, list) or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0
                                              for d in entry):
        raise ShapesError(f"{where}: a shape is a list of non-negative integers, got {entry!r}")
    dims = tuple(entry)
    if size is None:
        size = "small" if math.prod(dims) <= small_max else "large"
    return Shape(dims, size)
