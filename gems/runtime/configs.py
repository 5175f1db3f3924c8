"""Per-vendor kernel configs: ``tune_configs.yaml`` (autotune lists) and ``heuristics_config_utils.py``.

``tune_configs.yaml`` maps an operator key to a list of configs::

    softmax_inner:
      - {META: {BLOCK_N: 1024}, num_warps: 4, num_stages: 1}

``heuristics_config_utils.py`` defines ``HEURISTICS_CONFIGS = {key: {meta_name: fn(args) -> value}}``
for ``triton.heuristics``; so may one file per operator family in the vendor's ``heuristics/`` folder
(``heuristics/pointwise.py``, ``heuristics/reduction.py``...), so that each family's rules sit in one
place and a new family adds a file instead of editing a shared one. A key defined in two of a vendor's
files is an error.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from gems.runtime.vendor import VendorError
from gems.yaml_file import read_mapping

_CONFIG_FIELDS = {"META", "num_warps", "num_stages", "num_ctas", "maxnreg"}


def load_tune_configs(path: Path) -> dict[str, list]:
    """Parse a vendor's ``tune_configs.yaml``; any malformed entry names the file and the key."""
    if not path.is_file():
        return {}
    raw = read_mapping(path, VendorError, "a mapping of operator key -> list of configs")
    return {key: _parse_config_list(path, key, entries) for key, entries in raw.items()}


def _parse_config_list(path: Path, key: str, entries) -> list:
    import triton  # not at import time: the interpreter vendor must switch Triton's mode first
    if not isinstance(entries, list) or not entries:
        raise VendorError(f"{path}: key {key!r}: expected a non-empty list of configs")
    configs = []
    for i, entry in enumerate(entries):
        where = f"{path}: key {key!r}, config #{i}"
        if not isinstance(entry, dict) or not isinstance(entry.get("META"), dict):
            raise VendorError(f"{where}: expected a mapping with a META mapping of constexpr values")
        unknown = set(entry) - _CONFIG_FIELDS
        if unknown:
            raise VendorError(f"{where}: unknown field(s) {sorted(unknown)}; allowed: {sorted(_CONFIG_FIELDS)}")
        options = {k: v for k, v in entry.items() if k != "META"}
        for name, value in options.items():
            if not isinstance(value, int) or value < 1:
                raise VendorError(f"{where}: {name} must be a positive integer, got {value!r}")
        configs.append(triton.Config(dict(entry["META"]), **options))
    return configs


def load_vendor_heuristics(directory: Path) -> dict[str, dict]:
    """A vendor's ``HEURISTICS_CONFIGS``: its ``heuristics/<family>.py`` files and ``heuristics_config_utils.py``
    together; a key found in two of them raises, naming both files."""
    table, source = {}, {}
    family_files = sorted(p for p in (directory / "heuristics").glob("*.py") if p.name != "__init__.py")
    for path in [*family_files, directory / "heuristics_config_utils.py"]:
        for key, rules in load_heuristics(path).items():
            if key in source:
                raise VendorError(f"heuristics key {key!r} is defined in both {source[key]} and {path}: keep one")
            table[key], source[key] = rules, path
    return table


def load_heuristics(path: Path) -> dict[str, dict]:
    """Import one heuristics file (``heuristics_config_utils.py``, ``heuristics/<family>.py``) and return its
    ``HEURISTICS_CONFIGS``."""
    if not path.is_file():
        return {}
    module_name = "gems_heuristics_" + re.sub(r"\W", "_", "_".join(path.with_suffix("").parts[-3:]))
    try:
        spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except Exception as exc:
        raise VendorError(f"{path}: failed to import: {exc!r}") from exc
    table = getattr(module, "HEURISTICS_CONFIGS", None)
    if not isinstance(table, dict):
        raise VendorError(f"{path}: must define HEURISTICS_CONFIGS = {{operator key: {{name: function}}}}")
    for key, rules in table.items():
        if not isinstance(rules, dict) or not all(callable(f) for f in rules.values()):
            raise VendorError(f"{path}: key {key!r}: expected a mapping of constexpr name -> function(args)")
    return table
