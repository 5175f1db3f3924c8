"""conformance.json (versioned), its compact reviewable form, and the support matrix (Markdown + CSV).

A run writes ``conformance.json``: one record per case (status, errors, shapes, seeds, kernel launches...),
about 30 MB for the quick suite, a run artifact under ``runs/``. A committed baseline is its compact form,
``conformance_cells.json`` (:func:`compact`, :func:`compact_text`): the run's environment, the collected count
per operator, the count of each status per cell (operator x dtype) and every case that did not simply pass
(id, status, message), one sorted line each, so that a pull request's diff shows what changed. Everything
that reads results here (cells, the summary line, the support matrix) takes either form.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter, defaultdict
from pathlib import Path

SCHEMA = "gems.conformance/1"
COMPACT_SCHEMA = "gems.conformance-cells/1"
FILE = "conformance.json"
COMPACT_FILE = "conformance_cells.json"
STATUSES = ("pass", "fail", "error", "unsupported", "fallback", "xfail", "xpass")
DTYPE_ORDER = ("float16", "bfloat16", "float32", "float64", "complex64", "int8", "int16", "int32", "int64",
               "uint8", "bool")
MARKS = {"pass": "✅", "fail": "❌", "fallback": "↩", "unsupported": "⛔", "xfail": "⚠", "xpass": "❗"}
# What each mark means, as the legends of the Markdown and HTML matrices say it. A cell's mark is its worst
# status; its text counts the cases: passed / cases, then those that did not simply pass.
LEGEND = {
    "pass": "no failure: every case that ran passed",
    "fail": "a case failed or raised",
    "fallback": "some cases deliberately left to ATen (still checked against the oracle)",
    "xfail": "a declared known failure",
    "xpass": "a declared known failure now passes (remove its declaration)",
    "unsupported": "not run here: a dtype the vendor does not support, or no reference on its device "
                   "(ATen has no kernel there); the reasons are listed below",
}
REQUIRED_CASE_FIELDS = ("id", "op", "dtype", "variant", "status")
COMPACT_CASE_FIELDS = ("id", "status", "message")  # what the compact form keeps of a case


class ReportError(ValueError):
    """A results file that cannot be used: the message names the file and what is wrong."""


def build(env: dict, mode: str, collected: dict, results: list[dict], notes=()) -> dict:
    counts = Counter(r["status"] for r in results)
    return {
        "schema": SCHEMA, **env, "mode": mode, "notes": list(notes),
        "collected": dict(sorted(collected.items())),
        "summary": {status: counts.get(status, 0) for status in
                    ("pass", "fail", "error", "unsupported", "fallback", "xfail", "xpass")},
        "cases": sorted(results, key=lambda r: r["id"]),
    }


def write(report_dir: Path, report: dict) -> list[Path]:
    report_dir.mkdir(parents=True, exist_ok=True)
    paths = {
        FILE: json.dumps(report, indent=1, sort_keys=False) + "\n",
        "support_matrix.md": matrix_markdown(report),
        "support_matrix.csv": matrix_csv(report),
    }
    written = []
    for name, text in paths.items():
        path = report_dir / name
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(text)
        tmp.replace(path)  # never leave a half-written report behind
        written.append(path)
    return written


def find(directory: Path) -> Path:
    """The results file of a run or baseline directory: ``conformance.json`` (case-level) where it exists, else
    ``conformance_cells.json`` (compact); the former's path when neither does (to name in a message)."""
    directory = Path(directory)
    full, compact_path = directory / FILE, directory / COMPACT_FILE
    return compact_path if not full.is_file() and compact_path.is_file() else full


def load(path: Path) -> dict:
    """Read and check a conformance.json or its compact form; raise ReportError naming the file and the problem.
    A compact report's cases get their op, dtype and variant back from their ids."""
    path = Path(path)
    if not path.is_file():
        raise ReportError(f"{path}: file not found")
    try:
        report = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ReportError(f"{path}: not valid JSON (truncated?): {exc}") from exc
    if not isinstance(report, dict) or report.get("schema") not in (SCHEMA, COMPACT_SCHEMA):
        found = report.get("schema") if isinstance(report, dict) else type(report).__name__
        raise ReportError(f"{path}: schema is {found!r}, expected {SCHEMA!r} (or the compact {COMPACT_SCHEMA!r})")
    is_compact = report["schema"] == COMPACT_SCHEMA
    for key in ("vendor", "device", "torch", "triton", "collected", "cases") + (("cells",) if is_compact else ()):
        if key not in report:
            raise ReportError(f"{path}: missing field {key!r}")
    required = COMPACT_CASE_FIELDS[:2] if is_compact else REQUIRED_CASE_FIELDS
    for i, case in enumerate(report["cases"]):
        missing = [f for f in required if f not in case]
        if missing:
            raise ReportError(f"{path}: case #{i} lacks field(s) {missing}")
        if is_compact:
            case.update(_names(path, case["id"]))
    if is_compact:
        bad = [key for key, counts in report["cells"].items()
               if key.count("::") != 1 or not isinstance(counts, dict)]
        if bad:
            raise ReportError(f"{path}: cell {bad[0]!r}: expected \"operator::dtype\": {{status: count}}")
    return report


def _names(path: Path, case_id: str) -> dict:
    parts = str(case_id).split("::", 2)
    if len(parts) != 3:
        raise ReportError(f"{path}: case id {case_id!r} is not operator::dtype::variant")
    return dict(zip(("op", "dtype", "variant"), parts))


def compact(report: dict) -> dict:
    """The compact form of a run (the same report if it is one already): environment, mode, notes, collected
    counts, per cell the count of each status, and every case that did not simply pass, all sorted."""
    if report.get("schema") == COMPACT_SCHEMA:
        return report
    env = {k: v for k, v in report.items() if k not in ("schema", "mode", "notes", "collected", "summary", "cases")}
    table = {f"{op}::{dtype}": {s: counts[s] for s in STATUSES if counts[s]}
             for (op, dtype), counts in sorted(cells(report).items())}
    cases = [{"id": c["id"], "op": c["op"], "dtype": c["dtype"], "variant": c["variant"], "status": c["status"],
              "message": c.get("message", "")}
             for c in sorted(report["cases"], key=lambda c: c["id"]) if c["status"] != "pass"]
    return {"schema": COMPACT_SCHEMA, **env, "mode": report["mode"], "notes": list(report.get("notes", [])),
            "collected": dict(sorted(report["collected"].items())), "cells": table, "cases": cases}


def compact_text(report: dict) -> str:
    """The compact form as JSON laid out for review: one line per field, operator, cell and case, so that a
    diff shows exactly the cells and cases that changed."""
    report = compact(report)

    def block(name: str, lines: list[str], opening: str, closing: str) -> str:
        inner = ",\n".join(f"  {line}" for line in lines)
        return f' "{name}": {opening}\n{inner}\n {closing}' if lines else f' "{name}": {opening}{closing}'

    head = [f" {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in report.items()
            if k not in ("notes", "collected", "cells", "cases")]
    parts = head + [
        block("notes", [json.dumps(n, ensure_ascii=False) for n in report["notes"]], "[", "]"),
        block("collected", [f"{json.dumps(op)}: {n}" for op, n in sorted(report["collected"].items())], "{", "}"),
        block("cells", [f"{json.dumps(key)}: {json.dumps(counts)}" for key, counts in sorted(report["cells"].items())],
              "{", "}"),
        block("cases", [json.dumps({f: c.get(f, "") for f in COMPACT_CASE_FIELDS}, ensure_ascii=False)
                        for c in sorted(report["cases"], key=lambda c: c["id"])], "[", "]"),
    ]
    return "{\n" + ",\n".join(parts) + "\n}\n"


def cells(report: dict) -> dict:
    """(op, dtype) -> Counter of statuses, from either form."""
    table = defaultdict(Counter)
    if "cells" in report:
        for key, counts in report["cells"].items():
            op, dtype = key.split("::", 1)
            table[op, dtype].update(counts)
        return table
    for case in report["cases"]:
        table[case["op"], case["dtype"]][case["status"]] += 1
    return table


def status_counts(report: dict) -> Counter:
    """Cases per status, counted from the cells (never read from a file's own summary)."""
    total = Counter()
    for counts in cells(report).values():
        total.update(counts)
    return total


def cell_status(counts: Counter) -> str:
    if counts["fail"] or counts["error"]:
        return "fail"
    if counts["xpass"]:
        return "xpass"
    if counts["unsupported"] == sum(counts.values()):
        return "unsupported"
    if counts["fallback"]:
        return "fallback"
    if counts["xfail"]:
        return "xfail"
    return "pass"


def _dtypes(table) -> list[str]:
    present = {dtype for _, dtype in table}
    return [d for d in DTYPE_ORDER if d in present] + sorted(present - set(DTYPE_ORDER))


def cell_text(counts: Counter) -> str:
    """"✅ 16/17 (1 unsupported)": the mark, passed / cases, then the cases that did not simply pass."""
    status = cell_status(counts)
    total = sum(counts.values())
    if status == "unsupported":
        return MARKS[status]
    text = f"{MARKS[status]} {counts['pass']}/{total}"
    extras = [f"{counts[s]} {s}" for s in ("fallback", "xfail", "fail", "error", "xpass", "unsupported") if counts[s]]
    return text + (f" ({', '.join(extras)})" if extras else "")


def summary_line(report: dict) -> str:
    """Cells passed and cases per status, recomputed from the cases (or the compact form's cells)."""
    table = cells(report)
    tested = [c for c in table.values() if cell_status(c) != "unsupported"]
    passed = sum(cell_status(c) in ("pass", "fallback", "xfail") for c in tested)
    s = status_counts(report)
    return (f"cells passed: {passed} / {len(tested)}; cases: {s['pass']} pass, {s['fail']} fail, {s['error']} error, "
            f"{s['fallback']} fallback, {s['xfail']} known failures, {s['xpass']} unexpected passes, "
            f"{s['unsupported']} unsupported")


def legend_markdown() -> str:
    return ("Marks: " + " · ".join(f"{MARKS[s]} {LEGEND[s]}" for s in ("pass", "fail", "fallback", "xfail", "xpass",
                                                                        "unsupported"))
            + " · blank: not declared. A cell reads passed / cases, then the cases that did not simply pass.")


def problem_cases(report: dict) -> list[dict]:
    """Every case that did not simply pass, sorted by id."""
    return sorted((c for c in report["cases"] if c["status"] != "pass"), key=lambda c: c["id"])


def matrix_markdown(report: dict, extra=None) -> str:
    """extra: optional {(op, dtype): text} appended to cells (the perf join adds speedups)."""
    table = cells(report)
    dtypes = _dtypes(table)
    ops = sorted({op for op, _ in table})
    lines = [
        f"# Support matrix: {report['vendor']}",
        "",
        f"Device: {report['device']}; driver: {report.get('driver') or 'n/a'}; torch {report['torch']}; "
        f"triton {report['triton']}; {report['mode']} mode; {report['date']}.",
        "",
        summary_line(report),
        "",
        legend_markdown(),
        "",
        "| operator | " + " | ".join(dtypes) + " |",
        "|---|" + "---|" * len(dtypes),
    ]
    for op in ops:
        row = []
        for dtype in dtypes:
            counts = table.get((op, dtype))
            text = cell_text(counts) if counts else ""
            if extra and (op, dtype) in extra:
                text += f" {extra[op, dtype]}"
            row.append(text)
        lines.append(f"| {op} | " + " | ".join(row) + " |")
    if report.get("notes"):
        lines += ["", "Vendor notes:", ""] + [f"- {n}" for n in report["notes"]]
    problems = problem_cases(report)
    if problems:
        lines += ["", "## Cases that did not simply pass", "", "| case | status | why |", "|---|---|---|"]
        lines += [f"| {c['id']} | {c['status']} | {c.get('message', '').replace('|', '/')[:200]} |" for c in problems]
    return "\n".join(lines) + "\n"


def matrix_csv(report: dict) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["op", "dtype", "status", "cases", "pass", "fail", "error", "fallback", "xfail", "xpass",
                     "unsupported"])
    for (op, dtype), counts in sorted(cells(report).items()):
        writer.writerow([op, dtype, cell_status(counts), sum(counts.values()), counts["pass"], counts["fail"],
                         counts["error"], counts["fallback"], counts["xfail"], counts["xpass"], counts["unsupported"]])
    return buffer.getvalue()
