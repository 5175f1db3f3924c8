"""Merging conformance runs made in shards (``--ops`` groups run one after another, or on several
machines) into one run that ``gems-gate`` can judge and promote.

A device session may be too short for the whole suite in one process; each shard then writes its own
report directory. The shards must be one run in all but their operators: the same vendor, device,
driver, torch, triton, gems commit and mode, and no operator in two shards. Anything else is refused
with the field and the directories that disagree, never merged silently.
"""

from __future__ import annotations

from pathlib import Path

from gems.gate.inputs import CONFORMANCE_FILE, GateInputError
from gems.perf import matrix
from gems.report import conformance_report

# What makes results comparable: shards that differ in one of these are not one run.
SAME_RUN_FIELDS = ("vendor", "device", "driver", "aten_on_device", "torch", "triton", "python", "commit", "mode")
# Fields of a report that the merge recomputes rather than copies.
_DERIVED = ("schema", "summary", "cases", "collected", "notes", "mode")


def _load(directory: Path) -> dict:
    path = Path(directory) / CONFORMANCE_FILE
    try:
        report = conformance_report.load(path)
    except conformance_report.ReportError as exc:
        raise GateInputError(str(exc)) from exc
    if report["schema"] != conformance_report.SCHEMA:
        raise GateInputError(f"{path}: is in the compact form; merge joins the case-level results of runs")
    return report


def merge(shards: list[Path], out: Path) -> list[str]:
    """Write the merged conformance.json and support matrix to ``out``; return the lines to print."""
    if len(shards) < 2:
        raise GateInputError("merge needs at least two shard directories")
    reports = [_load(d) for d in shards]
    first = reports[0]
    for field in SAME_RUN_FIELDS:
        values = {str(r.get(field)) for r in reports}
        if len(values) > 1:
            found = ", ".join(f"{d}: {r.get(field)!r}" for d, r in zip(shards, reports))
            raise GateInputError(f"shards differ in {field!r} ({found}): they are not one run")
    owner: dict[str, Path] = {}
    collected, cases, notes = {}, [], []
    for directory, report in zip(shards, reports):
        for op, count in report["collected"].items():
            if op in owner:
                raise GateInputError(f"operator {op!r} is in two shards ({owner[op]} and {directory}): "
                                     f"run each operator in one shard only")
            owner[op] = directory
            collected[op] = count
        cases += report["cases"]
        notes += [n for n in report.get("notes", []) if n not in notes]
    env = {k: v for k, v in first.items() if k not in _DERIVED}
    env["date"] = max(r["date"] for r in reports)  # the run ended when its last shard did
    notes.append(f"Merged from {len(shards)} shards run one after another: "
                 + ", ".join(f"{d} ({r['date']})" for d, r in zip(shards, reports)) + ".")
    report = conformance_report.build(env, first["mode"], collected, cases, notes)
    written = conformance_report.write(Path(out), report)
    written += matrix.refresh(Path(out))
    return [f"merged {len(shards)} shards: {len(collected)} operators, {len(cases)} cases"] + \
        [f"wrote {p}" for p in written] + [conformance_report.summary_line(report)]
