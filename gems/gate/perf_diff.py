"""What changed between two perf runs, per operator.

An operator's speedup is the geometric mean of its rows' speedups (ATen time / gems time, per-call
time for small shapes: :func:`gems.perf.results.row_speedup`, as perf_summary.md counts them) over
rows with status ok. Baseline and candidate are compared on the rows ok in both (same op, dtype, shape),
so a shape that stopped working cannot hide a slowdown; such rows are listed on their own.
A drop beyond the threshold is re-measured (when a re-measure function is given) and blocks only
if it persists.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from gems.gate.inputs import PERF_FILE, load_perf, perf_key
from gems.perf.results import geomean, row_speedup

BROKEN = ("mismatch", "error", "oom")  # a row that ran fine and now gives a wrong result or crashes


@dataclass
class OpPerf:
    op: str
    rows: int  # rows compared (ok in both runs)
    before: float  # geometric-mean speedup in the baseline over those rows
    after: float  # ... in the candidate
    first: float | None = None  # the candidate's first measurement, where it was re-measured

    @property
    def change_pct(self) -> float:
        return (self.after / self.before - 1.0) * 100.0


@dataclass
class RowChange:
    op: str
    dtype: str
    shape: str
    before: str
    after: str  # "" where the row is gone
    reason: str = ""


@dataclass
class PerfDiff:
    threshold_pct: float
    regressions: list = field(default_factory=list)  # OpPerf, slower beyond the threshold (after re-measuring)
    not_reproduced: list = field(default_factory=list)  # OpPerf, slower at first, fine when re-measured
    faster: list = field(default_factory=list)  # OpPerf, faster beyond the threshold
    broken_rows: list = field(default_factory=list)  # RowChange, ok before, mismatch/error/oom now
    vanished_rows: list = field(default_factory=list)  # RowChange, in the baseline, not measured now
    other_rows: list = field(default_factory=list)  # RowChange, other status changes
    new_ops: dict = field(default_factory=dict)  # operator -> geometric-mean speedup, no baseline rows
    overall: tuple | None = None  # (baseline, candidate) geometric means over all compared rows
    notes: list = field(default_factory=list)

    @property
    def blocking(self) -> bool:
        return bool(self.regressions or self.broken_rows or self.vanished_rows)


def _by_key(rows) -> dict:
    return {perf_key(r): r for r in rows}


def _op_perf(op: str, base: dict, cand: dict) -> OpPerf | None:
    keys = [k for k, r in base.items() if k[0] == op and r["status"] == "ok"
            and k in cand and cand[k]["status"] == "ok"]
    if not keys:
        return None
    return OpPerf(op, len(keys), geomean(row_speedup(base[k]) for k in keys),
                  geomean(row_speedup(cand[k]) for k in keys))


def compare(baseline_rows, candidate_rows, threshold_pct: float,
            remeasure: Callable[[list[str]], list[dict]] | None = None) -> PerfDiff:
    """remeasure(ops) -> fresh perf rows for just those operators (None: take the first measurement)."""
    diff = PerfDiff(threshold_pct)
    base, cand = _by_key(baseline_rows), _by_key(candidate_rows)
    for key, row in base.items():
        now = cand.get(key)
        if now is None:
            diff.vanished_rows.append(RowChange(*key, row["status"], ""))
        elif row["status"] == "ok" and now["status"] in BROKEN:
            diff.broken_rows.append(RowChange(*key, "ok", now["status"], now["reason"]))
        elif row["status"] != now["status"]:
            diff.other_rows.append(RowChange(*key, row["status"], now["status"], now["reason"]))

    base_ops = {k[0] for k in base}
    limit = threshold_pct / 100.0
    compared = [p for p in (_op_perf(op, base, cand) for op in sorted(base_ops)) if p is not None]
    suspects = [p for p in compared if p.after < p.before * (1 - limit)]
    if suspects and remeasure is not None:
        suspects = _remeasure(suspects, base, cand, remeasure, limit, diff)
    diff.regressions = suspects
    diff.faster = [p for p in compared if p.after > p.before * (1 + limit)]

    both = [k for k, r in base.items() if r["status"] == "ok" and k in cand and cand[k]["status"] == "ok"]
    if both:
        diff.overall = (geomean(row_speedup(base[k]) for k in both), geomean(row_speedup(cand[k]) for k in both))
    for op in sorted({k[0] for k in cand} - base_ops):
        diff.new_ops[op] = geomean(row_speedup(r) for k, r in cand.items() if k[0] == op)
    return diff


def _remeasure(suspects, base, cand, remeasure, limit, diff) -> list:
    ops = [p.op for p in suspects]
    try:
        fresh = _by_key(remeasure(ops))
    except Exception as exc:  # the slowdown was measured once; without a second look it stands
        diff.notes.append(f"Re-measuring {', '.join(ops)} failed, so the first measurement stands: {exc}")
        return suspects
    persisting = []
    for first in suspects:
        again = _op_perf(first.op, base, {k: r for k, r in fresh.items() if k[0] == first.op})
        if again is None:
            diff.notes.append(f"Re-measuring {first.op} gave no row comparable with the baseline; "
                              f"the first measurement stands.")
            persisting.append(first)
            continue
        again.first = first.after
        (persisting if again.after < again.before * (1 - limit) else diff.not_reproduced).append(again)
    return persisting


def gems_perf_remeasurer(vendor: str, perf_args=()) -> Callable[[list[str]], list[dict]]:
    """Re-measure operators by running gems-perf for just them, with the candidate run's suite options."""

    def remeasure(ops: list[str]) -> list[dict]:
        with tempfile.TemporaryDirectory(prefix="gems-gate-remeasure-") as tmp:
            cmd = [sys.executable, "-m", "gems.perf", "--vendor", vendor, "--ops", ",".join(ops), "--out", tmp,
                   *perf_args]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            out = Path(tmp) / PERF_FILE
            if not out.is_file():  # gems-perf may exit non-zero for a mismatch and still write its table
                tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-5:])
                raise RuntimeError(f"`{shlex.join(cmd)}` exited {proc.returncode} and wrote no {PERF_FILE}:\n{tail}")
            return load_perf(out)

    return remeasure
