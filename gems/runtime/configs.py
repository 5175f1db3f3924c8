"""Per-vendor kernel configs: ``tune_configs.yaml`` (autotune lists) and ``heuristics_config_utils.py``.

``tune_configs.yaml`` maps an operator key to the list of configs ``triton.autotune`` tries::

    gemm:
      - {META: {BLOCK_M: 128, BLOCK_N: 256, BLOCK_K: 64, GROUP_M: 8}, num_warps: 8, num_stages: 3}

A vendor's key replaces its base vendor's list for that key whole; keys it leaves out come from the
base. Every file of the vendor chain is checked when the vendor is activated: an unknown key or
field, a missing or unknown META name, or a value of the wrong type is a :class:`VendorError` naming
the file, the line and the key. A vendor whose device cannot benchmark (``multi_config_autotune``
false, the interpreter) runs the first config of each list. Tuning results are cached on disk by
Triton (``cache_results``), so a second process with the same configs does not tune again (results tuned
before gems timed the device alone, tuning_timer.py, stay in Triton's cache until it is cleared).

``heuristics_config_utils.py`` defines ``HEURISTICS_CONFIGS = {key: {meta_name: fn(args) -> value}}``
for ``triton.heuristics``; so may one file per operator family in the vendor's ``heuristics/`` folder
(``heuristics/pointwise.py``, ``heuristics/reduction.py``...), so that each family's rules sit in one
place and a new family adds a file instead of editing a shared one. A key defined in two of a vendor's
files is an error. They are checked when the vendor is activated too (:func:`check_heuristics`): a file
that does not import, an unknown key, a key that lacks a name its kernels read, and a rule that raises
or returns a bad value for the arguments the kernels pass (``HEURISTICS_KEYS``) each stop with the file,
the key and the fix.
"""

from __future__ import annotations

import difflib
import importlib.util
import re
from pathlib import Path
from typing import NamedTuple

from gems.runtime.tuning_timer import device_time
from gems.runtime.vendor import VendorError
from gems.yaml_file import read_mapping_with_lines

# Every operator key that autotunes, and the constexpr names each of its configs sets under META.
# An operator that autotunes adds its key here (and configs for it to the nvidia and interpreter
# files); a vendor file naming any other key is refused, so a typo cannot go silently unused.
TUNE_KEYS = {
    "gemm": ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M"),  # gems/ops/blas/gemm.py: mm, bmm, addmm, ...
    "gemv": ("BLOCK_M", "BLOCK_K"),  # gems/ops/blas/gemv.py: mv, addmv, dot, and mm with one row
    "skinny": ("BLOCK_N", "BLOCK_K"),  # gems/ops/blas/skinny.py: products with <= 16 rows (decode)
    # gems/ops/blas/persistent.py: large fp16/bf16 products, TMA and pointer loads (SCHEDULE: its constants)
    "gemm_tma": ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "SCHEDULE"),
    "gemm_persistent": ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "SCHEDULE"),
    "conv": ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M"),  # gems/ops/conv/: convolution and its backward
    "attention": ("BLOCK_M", "BLOCK_N"),  # gems/ops/attention/flash.py: the forward kernel
    # gems/ops/attention/flash_backward.py: the dK/dV kernel (both paths), the two-kernel path's dQ kernel
    "attention_backward": ("BLOCK_M", "BLOCK_N"),
    "attention_backward_dq": ("BLOCK_M", "BLOCK_N"),
}
_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg")
_POWER_OF_TWO = ("num_warps",)  # besides every META name starting with BLOCK_ (tl.arange needs it)
_COUNTS = ("WHOLE_TILES",)  # heuristic values that may be 0: counts, not sizes


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
    """``triton.autotune`` over ``configs`` (a vendor's list), its results cached on disk, configs compared by
    their device time alone (gems/runtime/tuning_timer.py: Triton's timer measured the host's launch)."""
    import triton

    return triton.autotune(configs=configs, key=key, cache_results=True, do_bench=device_time, **kwargs)


class HeuristicsKey(NamedTuple):
    """What the kernels of one heuristics key read: the names its rules give and the arguments they get."""

    users: str  # the code that reads the key
    names: tuple[str, ...]  # names every rule set of the key must give
    optional: tuple[str, ...]  # names the kernels read when given (a default otherwise)
    chained: bool  # rules run in the order written, each seeing the values chosen before it in its args
    args: tuple[dict, ...]  # representative arguments the callers pass; every rule is called with each


def _layouts(*layouts) -> tuple[dict, ...]:
    """Reduction planner arguments (gems/ops/reduction/planning.config) for (layout, n_outer, n_red, n_inner)."""
    return tuple({"layout": layout, "n_outer": outer, "n_red": red, "n_inner": inner, "n_rows": outer * inner}
                 for layout, outer, red, inner in layouts)


def _operand():
    """A kernel's tensor argument as rules see it (they may ask its device or dtype): an empty meta tensor."""
    import torch

    return torch.empty(0, dtype=torch.float16, device="meta")


# Every heuristics key the kernels read. A vendor file naming any other key is refused, so a typo cannot go
# silently unused; an operator that reads a new key adds it here (and rules for it to the nvidia and
# interpreter vendors). The args cover the sizes the callers pass: odd, one element, an empty reduction,
# the perf shapes' largest, and both reduction layouts.
HEURISTICS_KEYS = {
    "pointwise": HeuristicsKey(
        "gems/codegen/pointwise.py (pointwise_config: pointwise ops, fills, cat, padding, triu...)",
        ("BLOCK", "num_warps"), (), False,
        tuple({"n_elements": n, "itemsize": size}
              for n in (1, 13 * 17, 4096, 1 << 22, 1 << 26) for size in (1, 2, 4, 8))),
    "reduction": HeuristicsKey(
        "gems/ops/reduction/planning.py (config: reductions, scans, arg reductions, moments, losses)",
        ("BLOCK_M", "BLOCK_K", "num_warps"), ("SPLITS",), True,
        _layouts(("rows", 1, 1, 1), ("rows", 5, 0, 1), ("rows", 13, 17, 1), ("rows", 1, 1 << 20, 1),
                 ("rows", 32768, 4096, 1), ("rows", 1 << 20, 2, 1), ("cols", 1, 7, 13), ("cols", 32, 4096, 1024),
                 ("cols", 1, 1 << 16, 3))),
    "softmax": HeuristicsKey(
        "gems/ops/reduction/softmax.py (softmax, log_softmax, _safe_softmax and their backward)",
        ("BLOCK_M", "BLOCK_K", "num_warps"), (), True,
        _layouts(("rows", 1, 1, 1), ("rows", 13, 17, 1), ("rows", 4096, 4096, 1), ("rows", 4096, 32000, 1),
                 ("rows", 1, 1 << 17, 1), ("cols", 1, 7, 13), ("cols", 32, 128, 1024))),
    "copy_flat": HeuristicsKey(
        "gems/ops/copy/shared.py (flat_config: copies between tensors of one dense layout)",
        ("BLOCK", "num_warps"), (), False,
        tuple({"n_elements": n, "itemsize": size}
              for n in (1, 13 * 17, 4096, 1 << 22, 1 << 26) for size in (1, 2, 4, 8))),
    "copy": HeuristicsKey(
        "gems/ops/copy/shared.py (tile_config: the tiled copy of any other pair of layouts)",
        ("BLOCK_M", "BLOCK_N", "num_warps"), (), False,
        tuple({"size_m": m, "size_n": n, "itemsize": size, "transposed": transposed}
              for m, n in ((1, 1), (13, 17), (1, 1 << 20), (1 << 20, 3), (4096, 4096))
              for size in (1, 2, 4, 8) for transposed in (False, True))),
    "pooling": HeuristicsKey(
        "gems/ops/pooling/shared.py (tile_config: the pooling and upsampling kernels' image tiles)",
        ("BLOCK_C", "BLOCK_R", "num_warps"), (), True,
        tuple({"rows": r, "cols": c, "itemsize": size, "channels_last": cl}
              for r, c in ((1, 1), (13, 17), (114688, 56), (1568, 2048), (1, 1 << 20), (1 << 20, 3))
              for size in (2, 4, 8) for cl in (False, True))),
    "gemm_route": HeuristicsKey(
        "gems/ops/blas/persistent.py (mode: which GEMM a product takes, by its 2*M*N*K flops and operand layouts) "
        "and skinny.py (max_rows: the most rows of its few-row product)",
        ("PERSISTENT_MIN_FLOPS", "TMA_MIN_FLOPS"), ("SKINNY_MAX_ROWS",), False,
        tuple({"M": m, "N": n, "K": k, "A_K_MAJOR": a_k, "B_K_MAJOR": b_k}
              for m, n, k in ((1, 1, 1), (13, 19, 11), (4096, 4096, 4096))
              for a_k in (False, True) for b_k in (False, True))),
    "gemm_persistent": HeuristicsKey(
        "gems/ops/blas/persistent.py (the persistent GEMM's K split: SPLIT_K runs of each tile after the first "
        "WHOLE_TILES)",
        ("SPLIT_K", "WHOLE_TILES"), (), False,
        tuple({"M": m, "N": n, "K": k, "BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "a_ptr": _operand()}
              for m, n, k in ((24, 100, 20), (40, 36, 48), (64, 4096, 4096), (4096, 4096, 4096))
              for bm, bn, bk in ((32, 32, 32), (128, 256, 64)))),
    "patch_fusion": HeuristicsKey(
        "gems/patch/forwards.py (fuses: whether a patched module's fused kernel runs for a call, by the elements "
        "of its activation; smaller calls run the module's own forward)",
        ("MIN_NUMEL",), (), False,
        tuple({"numel": n} for n in (0, 1, 4096, 1 << 22, 1 << 26))),
    "attention_decode": HeuristicsKey(
        "gems/ops/attention/decode.py (the split-KV forward: key chunks per (batch, kv head), its tiles)",
        ("BLOCK_N", "SPLITS", "num_warps", "num_stages"), (), True,
        tuple({"batch": b, "kv_heads": hk, "rows": r, "N": n, "HEAD_DIM": d, "q_ptr": _operand()}
              for b, hk, r, n, d in ((1, 1, 1, 256, 16), (2, 2, 8, 512, 32), (1, 8, 4, 8192, 128),
                                     (32, 8, 16, 8192, 128), (64, 1, 64, 1 << 20, 256)))),
    "attention_backward_route": HeuristicsKey(
        "gems/ops/attention/flash_backward.py (one_pass: whether dQ is added atomically by the dK/dV kernel or "
        "computed by its own kernel)",
        ("ONE_PASS_MAX_KEYS",), (), False,
        tuple({"batch": b, "heads": h, "kv_heads": hk, "M": m, "N": n, "HEAD_DIM": d, "DROPOUT": p}
              for b, h, hk, m, n, d in ((1, 1, 1, 1, 1, 16), (2, 4, 2, 13, 24, 32), (4, 12, 12, 512, 512, 64),
                                        (1, 32, 8, 2048, 2048, 128), (1, 2, 2, 0, 7, 16), (1, 2, 2, 5, 0, 256))
              for p in (False, True))),
}


def _power_of_two_name(name: str) -> bool:
    return name.startswith("BLOCK") or name in _POWER_OF_TWO


def read_vendor_heuristics(directory: Path) -> tuple[dict[str, dict], dict[str, Path]]:
    """(table, files): a vendor's ``HEURISTICS_CONFIGS`` from its ``heuristics/<family>.py`` files and
    ``heuristics_config_utils.py`` together, and the file that defines each key; a key found in two of them
    raises, naming both files."""
    table, source = {}, {}
    family_files = sorted(p for p in (directory / "heuristics").glob("*.py") if p.name != "__init__.py")
    for path in [*family_files, directory / "heuristics_config_utils.py"]:
        for key, rules in load_heuristics(path).items():
            if key in source:
                raise VendorError(f"heuristics key {key!r} is defined in both {source[key]} and {path}: keep one")
            table[key], source[key] = rules, path
    return table, source


def load_vendor_heuristics(directory: Path) -> dict[str, dict]:
    """A vendor's ``HEURISTICS_CONFIGS``, all its files together (see :func:`read_vendor_heuristics`)."""
    return read_vendor_heuristics(directory)[0]


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
    except SyntaxError as exc:
        raise VendorError(f"{path}:{exc.lineno}: syntax error: {exc.msg}; fix the file (it defines "
                          f"HEURISTICS_CONFIGS)") from exc
    except Exception as exc:
        raise VendorError(f"{path}: failed to import: {exc!r}; fix the file (it defines HEURISTICS_CONFIGS)") from exc
    table = getattr(module, "HEURISTICS_CONFIGS", None)
    if not isinstance(table, dict):
        raise VendorError(f"{path}: must define HEURISTICS_CONFIGS = {{operator key: {{name: function}}}}")
    for key, rules in table.items():
        if not isinstance(rules, dict):
            raise VendorError(f"{_where(path, key)}: key {key!r}: expected a mapping of constexpr name -> "
                              f"function(args), got {type(rules).__name__}")
        for name, rule in rules.items():
            if not callable(rule):
                raise VendorError(f"{_where(path, key)}: key {key!r}: {name!r} is {rule!r}, not a function; write "
                                  f"it as a rule of the kernel arguments, e.g. `lambda args: {rule!r}`")
    return table


def _where(path: Path, key: str, rule=None) -> str:
    """``path:line`` of a rule's definition, else of the key in the file's text, else the path alone."""
    code = getattr(rule, "__code__", None)
    if code is not None and Path(code.co_filename).resolve() == Path(path).resolve():
        return f"{path}:{code.co_firstlineno}"
    try:
        text = Path(path).read_text()
    except OSError:
        return str(path)
    found = re.search(r"""["']""" + re.escape(str(key)) + r"""["']\s*:""", text)
    return f"{path}:{text.count(chr(10), 0, found.start()) + 1}" if found else str(path)


def check_heuristics(chain: list[tuple[str, dict, dict]], run_rules: bool = True) -> None:
    """Check the heuristics of a vendor chain, ``[(vendor, table, files)]`` nearest first (as
    :func:`read_vendor_heuristics` gives them): every key is one the kernels read, with the names they read;
    every key resolves somewhere in the chain; and, with ``run_rules``, the rules in effect return a positive
    integer (a power of two for BLOCK* and num_warps; a count in _COUNTS may be 0) for each of the key's
    representative arguments.
    ``run_rules`` needs the device where rules query it (an SM count). Raises VendorError."""
    for _, table, files in chain:
        for key, rules in table.items():
            _check_names(files[key], key, rules)
    vendors = " -> ".join(vendor for vendor, _, _ in chain)
    for key, spec in HEURISTICS_KEYS.items():
        found = next(((table[key], files[key]) for _, table, files in chain if key in table), None)
        if found is None:
            raise VendorError(f"no heuristics for key {key!r} (read by {spec.users}) in the vendors {vendors}: "
                              f"define it in heuristics_config_utils.py or heuristics/<family>.py")
        if run_rules:
            _run_rules(found[1], key, found[0], spec)


def _check_names(path: Path, key: str, rules: dict) -> None:
    spec = HEURISTICS_KEYS.get(key)
    if spec is None:
        close = difflib.get_close_matches(str(key), HEURISTICS_KEYS, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise VendorError(f"{_where(path, key)}: unknown heuristics key {key!r}{hint}; the keys the kernels read are "
                          f"{', '.join(HEURISTICS_KEYS)}: rename it (a key no kernel reads is never used)")
    missing = [n for n in spec.names if n not in rules]
    if missing:
        raise VendorError(f"{_where(path, key)}: key {key!r} lacks {', '.join(missing)}: a vendor's key replaces its "
                          f"base's whole, so give every name its kernels read: {', '.join(spec.names)}"
                          + (f" (optional: {', '.join(spec.optional)})" if spec.optional else ""))
    unknown = [n for n in rules if n not in spec.names + spec.optional]
    if unknown:
        raise VendorError(f"{_where(path, key)}: key {key!r}: unknown name {unknown[0]!r}; its kernels read "
                          f"{', '.join(spec.names + spec.optional)}")


def _run_rules(path: Path, key: str, rules: dict, spec: HeuristicsKey) -> None:
    for sample in spec.args:
        args = dict(sample)
        for name, rule in rules.items():
            try:
                value = rule(dict(args))
            except Exception as exc:
                later = isinstance(exc, KeyError) and exc.args and exc.args[0] in rules
                fix = (f"rules run in the order written, each seeing the values chosen before it: put "
                       f"{exc.args[0]!r} before {name!r}" if later and spec.chained else
                       f"a rule must handle every call the kernels make (args {', '.join(sample)})")
                raise VendorError(f"{_where(path, key, rule)}: key {key!r}: rule {name!r} raised {exc!r} for args "
                                  f"{sample}: {fix}") from exc
            power = _power_of_two_name(name)
            least = 0 if name in _COUNTS else 1
            if type(value) is not int or value < least or (power and value & (value - 1)):
                need = ("a positive power-of-two integer" if power else "a non-negative integer" if least == 0
                        else "a positive integer")
                raise VendorError(f"{_where(path, key, rule)}: key {key!r}: rule {name!r} returned {value!r} for args "
                                  f"{sample}: {name} must be {need}")
            if spec.chained:
                args[name] = value
