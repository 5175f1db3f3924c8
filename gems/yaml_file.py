"""Reading the YAML files of gems (vendor configs, gate settings, perf shapes, tolerance overrides)."""

from __future__ import annotations

from pathlib import Path

import yaml


def read_mapping(path: Path, error: type[Exception], expected: str) -> dict:
    """The mapping in ``path`` ({} for an empty file). Bad YAML, or anything but a mapping, raises
    ``error`` naming the file; ``expected`` says what the mapping holds ("a mapping of setting -> value")."""
    try:
        raw = yaml.safe_load(Path(path).read_text())
    except yaml.YAMLError as exc:
        raise error(f"{path}: not valid YAML: {exc}") from exc
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise error(f"{path}: expected {expected}")
    return raw
