"""Reading a run's result files and checking that two runs can be compared.

A run is a directory holding ``conformance.json`` (written by the conformance suite, one record per case)
or its compact form ``conformance_cells.json`` (what ``gems-gate promote`` commits: cells and the cases that
did not simply pass) and, where perf is gated, ``perf.csv`` (written by gems-perf). Either conformance form
is read into the compact one, which is all the gate compares. Anything the gate cannot trust raises
:class:`GateInputError` with the file and what is wrong; the gate then exits 2 and never passes.
"""

from __future__ import annotations

import csv
import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from gems.perf import COLUMNS as PERF_COLUMNS
from gems.perf import STATUSES as PERF_STATUSES
from gems.perf import row_speedup
from gems.perf.results import OPTIONAL_COLUMNS
from gems.report import conformance_report
from gems.testing.cases import STATUSES as CASE_STATUSES

CONFORMANCE_FILE = conformance_report.FILE
COMPACT_FILE = conformance_report.COMPACT_FILE
PERF_FILE = "perf.csv"
MODES = ("quick", "full")

# Every row of one perf.csv comes from one process: these fields must agree across its rows.
PERF_RUN_FIELDS = ("vendor", "device", "torch", "triton", "timer", "flush")


class GateInputError(Exception):
    """A result file the gate cannot use; the message names the file and the problem."""


@dataclass
class Run:
    directory: Path
    conformance: dict  # the compact form (conformance_report.compact), whichever file it was read from
    perf: list[dict] | None  # None: perf not read (gating off) or absent where it may be
    conformance_path: Path | None = None  # the file read

    def __post_init__(self):
        if self.conformance_path is None:
            self.conformance_path = conformance_report.find(self.directory)

    @property
    def perf_path(self) -> Path:
        return self.directory / PERF_FILE


def load_conformance(path: Path) -> dict:
    """conformance.json or its compact form, checked beyond its schema (a complete run, known statuses, counts
    that agree), as the compact form."""
    try:
        report = conformance_report.load(path)
    except conformance_report.ReportError as exc:
        raise GateInputError(str(exc)) from exc
    if report.get("mode") not in MODES:
        raise GateInputError(f"{path}: mode is {report.get('mode')!r}, expected one of {MODES}")
    collected = report["collected"]
    if not isinstance(collected, dict) or not all(isinstance(n, int) and n >= 0 for n in collected.values()):
        raise GateInputError(f"{path}: 'collected' must map operator -> number of cases")
    ids = Counter(case["id"] for case in report["cases"])
    duplicated = sorted(i for i, n in ids.items() if n > 1)
    if duplicated:
        raise GateInputError(f"{path}: case id(s) appear more than once: {duplicated[:5]}")
    bad = [(c["id"], c["status"]) for c in report["cases"] if c["status"] not in CASE_STATUSES]
    if bad:
        raise GateInputError(f"{path}: case {bad[0][0]} has unknown status {bad[0][1]!r}; known: {CASE_STATUSES}")
    if "cells" in report:
        _check_cells(path, report)
    table = conformance_report.cells(report)
    if not table:
        raise GateInputError(f"{path}: holds no cases")
    per_op = Counter()
    for (op, _), counts in table.items():
        per_op[op] += sum(counts.values())
    for op in sorted(set(per_op) | set(collected)):
        if per_op[op] != collected.get(op, 0):
            raise GateInputError(
                f"{path}: incomplete run: {collected.get(op, 0)} case(s) of {op!r} collected but {per_op[op]} "
                f"result(s) recorded (interrupted, or run with -k/-x/--lf?); rerun the whole suite")
    return conformance_report.compact(report)


def _check_cells(path: Path, report: dict) -> None:
    """A compact file's cells and listed cases must agree: each listed case in a cell that counts its status,
    and every status but pass counted as many times as cases list it."""
    listed = Counter((c["op"], c["dtype"], c["status"]) for c in report["cases"])
    for key, counts in report["cells"].items():
        op, dtype = key.split("::", 1)
        for status, n in counts.items():
            if status not in CASE_STATUSES or not isinstance(n, int) or n < 0:
                raise GateInputError(f"{path}: cell {op}::{dtype}: {status!r}: {n!r} is not a count of a known "
                                     f"status ({', '.join(CASE_STATUSES)})")
            if status != "pass" and listed[op, dtype, status] != n:
                raise GateInputError(f"{path}: cell {op}::{dtype} counts {n} {status} case(s) but the file lists "
                                     f"{listed[op, dtype, status]}: a compact file lists every case that did not "
                                     f"simply pass (edited by hand?)")
    for op, dtype, status in listed:
        if status == "pass":
            raise GateInputError(f"{path}: lists a passing case of {op}::{dtype}: a compact file lists only the "
                                 f"cases that did not simply pass")


def load_perf(path: Path) -> list[dict]:
    """perf.csv rows, checked: all columns, no truncated row, known statuses, one environment."""
    path = Path(path)
    if not path.is_file():
        raise GateInputError(f"{path}: file not found")
    try:
        with path.open(newline="") as handle:
            reader = csv.reader(handle)
            header = next(reader, None)
            if not header:
                raise GateInputError(f"{path}: empty file (no header row)")
            # gems-perf's fixed columns (older files lack the optional ones); extras are ignored
            missing = [c for c in PERF_COLUMNS if c not in header and c not in OPTIONAL_COLUMNS]
            if missing:
                raise GateInputError(f"{path}: missing column(s) {missing}; found {header}")
            rows = []
            for fields in reader:
                if not fields:
                    continue
                if len(fields) != len(header):
                    raise GateInputError(f"{path}: line {reader.line_num} has {len(fields)} field(s), expected "
                                         f"{len(header)} (truncated or malformed row)")
                rows.append(_check_perf_row(path, reader.line_num, dict(zip(header, fields))))
    except (csv.Error, UnicodeDecodeError) as exc:
        raise GateInputError(f"{path}: not a readable CSV file (truncated?): {exc}") from exc
    if not rows:
        raise GateInputError(f"{path}: header only, no rows")
    for field in PERF_RUN_FIELDS:
        values = sorted({r[field] for r in rows})
        if len(values) > 1:
            raise GateInputError(f"{path}: rows disagree on {field}: {values} (results of several runs mixed)")
    keys = Counter(perf_key(r) for r in rows)
    duplicated = [k for k, n in keys.items() if n > 1]
    if duplicated:
        raise GateInputError(f"{path}: row {duplicated[0]} (op, dtype, shape) appears more than once")
    return rows


def _check_perf_row(path: Path, line: int, row: dict) -> dict:
    if row["status"] not in PERF_STATUSES:
        raise GateInputError(f"{path}: line {line}: unknown status {row['status']!r}; known: {PERF_STATUSES}")
    if not row["op"]:
        raise GateInputError(f"{path}: line {line}: empty op")
    if row["status"] == "ok" and not row["aten_ms"] and not row["aten_percall_us"]:
        # A device where ATen has no kernels (the simulated one): gems was timed alone, no speedup.
        gems_ms = _number_or_none(row["gems_ms"])
        if gems_ms is None or not (math.isfinite(gems_ms) and gems_ms > 0):
            raise GateInputError(f"{path}: line {line}: status ok but neither ATen times nor a usable gems time "
                                 f"(gems_ms {row['gems_ms']!r})")
    elif row["status"] == "ok":
        try:
            speedup = row_speedup(row)
        except ValueError:
            speedup = None
        if speedup is None or not (math.isfinite(speedup) and speedup > 0):
            raise GateInputError(
                f"{path}: line {line}: status ok but no usable speedup (speedup {row['speedup']!r}, per-call "
                f"{row['aten_percall_us']!r} / {row['gems_percall_us']!r} us), expected positive numbers")
    return row


def _number_or_none(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def perf_key(row: dict) -> tuple[str, str, str]:
    return row["op"], row["dtype"], row["shape"]


def load_run(directory: Path, perf: bool) -> Run:
    """A run directory; ``perf``: read perf.csv too, which must then exist."""
    directory = Path(directory)
    if not directory.is_dir():
        raise GateInputError(f"{directory}: directory not found")
    path = conformance_report.find(directory)
    run = Run(directory, load_conformance(path), None, path)
    if perf:
        read_perf(run)
    return run


def read_perf(run: Run) -> None:
    """Read the run's perf.csv, which must come from the same setup as its conformance.json."""
    run.perf = load_perf(run.perf_path)
    row = run.perf[0]
    for field in ("vendor", "device", "torch", "triton"):
        if str(run.conformance[field]) != row[field]:
            raise GateInputError(
                f"{run.perf_path}: {field} is {row[field]!r} but {run.conformance_path} says "
                f"{run.conformance[field]!r}: conformance and perf results come from different setups")


def check_comparable(vendor: str, candidate: Run, baseline: Run, allow_version_change: bool = False) -> list[str]:
    """Raise when the runs cannot be compared; return notes on differences that do not prevent it."""
    for run in (candidate, baseline):
        found = run.conformance["vendor"]
        if found != vendor:
            raise GateInputError(f"{run.conformance_path}: results of vendor {found!r}, but the gate was asked "
                                 f"to judge vendor {vendor!r}")
    cand, base = candidate.conformance, baseline.conformance
    for field, why in (("device", "results from another device"),
                       ("mode", "quick and full runs collect different cases")):
        if cand[field] != base[field]:
            raise GateInputError(f"{candidate.conformance_path}: {field} is {cand[field]!r} but the baseline "
                                 f"{baseline.conformance_path} has {base[field]!r} ({why}); run the candidate "
                                 f"the way the baseline was run")
    notes = []
    for field in ("torch", "triton"):
        if cand[field] != base[field]:
            text = (f"{field} {cand[field]} in {candidate.conformance_path}, {base[field]} in the baseline "
                    f"{baseline.conformance_path}")
            if not allow_version_change:
                raise GateInputError(f"mixed {field} versions: {text}. Run with the baseline's versions, or pass "
                                     f"--allow-version-change when the pull request upgrades {field}")
            notes.append(f"Versions differ (allowed by --allow-version-change): {text}.")
    if cand.get("driver") != base.get("driver"):
        notes.append(f"Driver differs: {cand.get('driver')} now, {base.get('driver')} in the baseline.")
    if candidate.perf and baseline.perf:
        for field in ("device", "timer", "flush"):
            now, then = candidate.perf[0][field], baseline.perf[0][field]
            if now != then:
                raise GateInputError(f"{candidate.perf_path}: {field} is {now!r} but the baseline "
                                     f"{baseline.perf_path} has {then!r}: timings are not comparable")
    return notes
