"""Per-vendor kernel configs: ``tune_configs.yaml`` (autotune lists) and ``heuristics_config_utils.py``.

``tune_configs.yaml`` maps an operator key to the list of configs ``triton.autotune`` tries::

    gemm:
      - {META: {BLOCK_M: 128, BLOCK_N: 256, BLOCK_K: 64, GROUP_M: 8}, num_warps: 8, num_stages: 3}

A vendor's key replaces its base vendor's list for that key whole; keys it leaves out come from the
base. Every file of the vendor chain is checked when the vendor is activated: an unknown key or
field, a missing or unknown META name, or a value of the wrong type is a :class:`VendorError` naming
the file, the line and the key. A vendor whose device cannot benchmark (``multi_config_autotune``
false, the interpreter) runs the first config of each list. Tuning results are cached on disk by
Triton (``cache_results``), so a second process with the same configs does not tune again.

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
from gems.yaml_file import read_mapping_with_lines

# Every operator key that autotunes, and the constexpr names each of its configs sets under META.
# An operator that autotunes adds its key here (and configs for it to the nvidia and interpreter
# files); a vendor file naming any other key is refused, so a typo cannot go silently unused.
TUNE_KEYS = {
    "gemm": ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M"),  # gems/ops/blas/gemm.py: mm, bmm, addmm, ...
    "gemv": ("BLOCK_M", "BLOCK_K"),  # gems/ops/blas/gemm.py: mv, addmv, dot, and mm with one row
    "skinny": ("BLOCK_N", "BLOCK_K"),  # gems/ops/blas/skinny.py: products with <= 16 rows (decode)
    # gems/ops/blas/persistent.py: large fp16/bf16 products, TMA and pointer loads (SCHEDULE: its constants)
    "gemm_tma": ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "SCHEDULE"),
    "gemm_persistent": ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "SCHEDULE"),
    "conv": ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M"),  # gems/ops/conv/: convolution and its backward
    "attention": ("BLOCK_M", "BLOCK_N"),  # gems/ops/attention/flash.py: the forward kernel
    "attention_backward": ("BLOCK_M", "BLOCK_N"),  # gems/ops/attention/flash_backward.py: dK/dV and dQ
}
_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg")
_POWER_OF_TWO = ("num_warps",)  # besides every META name starting with BLOCK_ (tl.arange needs it)


def load_tune_configs(path: Path) -> dict[str, list[dict]]:
    """A vendor's ``tune_configs.yaml``, checked: {key: [{"META": {...}, "num_warps": ...}, ...]}.
    An absent file is {}."""
    if not path.is_file():
        return {}
    raw, lines = read_mapping_with_lines(path, VendorError, "a mapping of operator key -> list of configs")
    return {key: _check_list(path, lines, key, entries) for key, entries in raw.items()}


def _check_list(path: Path, lines: dict, key, entries) -> list[dict]:
    def fail(where: tuple, message: str):
        line = lines.get(where) or lines.get(where[:2]) or lines.get(where[:1])
        raise VendorError(f"{path}:{line}: key {key!r}{f', config #{where[1]}' if len(where) > 1 else ''}: {message}")

    if key not in TUNE_KEYS:
        fail((key,), f"unknown operator key; the keys that autotune are {', '.join(sorted(TUNE_KEYS))}")
    if not isinstance(entries, list) or not entries:
        fail((key,), "expected a non-empty list of configs")
    names = TUNE_KEYS[key]
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("META"), dict):
            fail((key, i), f"expected a mapping with a META mapping of {', '.join(names)}")
        for field in entry:
            if field != "META" and field not in _OPTIONS:
                fail((key, i, field), f"unknown field {field!r}; allowed: META, {', '.join(_OPTIONS)}")
        meta = entry["META"]
        for name in meta:
            if name not in names:
                fail((key, i, "META", name), f"unknown META name {name!r}; key {key!r} takes {', '.join(names)}")
        missing = [n for n in names if n not in meta]
        if missing:
            fail((key, i, "META"), f"META lacks {', '.join(missing)}")
        for name, value, where in [*((n, v, (key, i, "META", n)) for n, v in meta.items()),
                                   *((n, v, (key, i, n)) for n, v in entry.items() if n != "META")]:
            if type(value) is not int or value < 1:
                fail(where, f"{name} must be a positive integer, got {value!r}")
            if (name.startswith("BLOCK_") or name in _POWER_OF_TWO) and value & (value - 1):
                fail(where, f"{name} must be a power of two, got {value}")
    return entries


def triton_configs(entries: list[dict]) -> list:
    import triton  # not at import time: the interpreter vendor must switch Triton's mode first

    return [triton.Config(dict(e["META"]), **{k: v for k, v in e.items() if k != "META"}) for e in entries]


def autotune(configs: list, key: list[str], **kwargs):
    """``triton.autotune`` over ``configs`` (a vendor's list), its results cached on disk."""
    import triton

    return triton.autotune(configs=configs, key=key, cache_results=True, **kwargs)


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
