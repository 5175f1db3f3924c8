"""The perf results as data: perf.csv's columns, the case statuses, and the speedup each case
contributes and their geometric means. Read by the runner, the report, charts, the support matrix and
the gate (one module below all of them, so that none imports another in a circle)."""

from __future__ import annotations

import csv
import io
import math
from collections import defaultdict
from pathlib import Path

# Fixed: the CI gate reads these names. Add a column only together with the gate.
COLUMNS = (
    "vendor", "device", "driver", "torch", "triton", "date", "timer", "flush",
    "op", "family", "dtype", "shape", "size_class", "status", "reason",
    "aten_ms", "gems_ms", "aten_p20_ms", "aten_p80_ms", "gems_p20_ms", "gems_p80_ms",
    "speedup", "gbps", "tflops", "pct_copy_bw",
    "aten_percall_us", "gems_percall_us", "percall_ratio", "first_call_ms", "suite", "commit", "native_pct",
)
# Columns a perf.csv written before they existed lacks; readers (the gate) must not require them.
OPTIONAL_COLUMNS = ("suite", "commit", "native_pct")
STATUSES = ("ok", "mismatch", "fallback", "unsupported", "no-perf", "oom", "error")


def _number(value) -> float | None:
    if value is None or value == "":
        return None
    number = float(value)
    return None if math.isnan(number) else number


def row_speedup(row: dict) -> float | None:
    """The speedup a case contributes to aggregates (works on runner rows and on rows read from perf.csv)."""
    if row.get("status") != "ok":
        return None
    if row.get("size_class") == "small":
        aten, mine = _number(row.get("aten_percall_us")), _number(row.get("gems_percall_us"))
        if aten and mine:
            return aten / mine
    return _number(row.get("speedup"))


def geomean(values) -> float | None:
    values = [v for v in values if v is not None and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.6g}"
    return str(value)


def csv_text(rows) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({c: _cell(row.get(c)) for c in COLUMNS})
    return buffer.getvalue()


def write_atomic(path: Path, data) -> Path:
    """Write through a temporary file so that no half-written report is ever left behind."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data) if isinstance(data, bytes) else tmp.write_text(data)
    tmp.replace(path)
    return path


def read_csv(path: Path) -> list[dict]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def aggregates(rows) -> dict:
    """Geometric-mean speedups: overall and by operator, family and dtype (rows with status ok)."""
    groups = {"op": defaultdict(list), "family": defaultdict(list), "dtype": defaultdict(list)}
    overall = []
    for row in rows:
        speedup = row_speedup(row)
        if speedup is None:
            continue
        overall.append(speedup)
        for key, table in groups.items():
            table[row[key]].append(speedup)
    result = {"overall": geomean(overall), "cases": len(overall)}
    for key, table in groups.items():
        result[key] = {name: (geomean(v), len(v), min(v), max(v)) for name, v in sorted(table.items())}
    return result
