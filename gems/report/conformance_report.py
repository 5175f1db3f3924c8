"""conformance.json (versioned) and the support matrix (Markdown + CSV) built from it."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter, defaultdict
from pathlib import Path

SCHEMA = "gems.conformance/1"
DTYPE_ORDER = ("float16", "bfloat16", "float32", "float64", "complex64", "int8", "int16", "int32", "int64",
               "uint8", "bool")
MARKS = {"pass": "✅", "fail": "❌", "fallback": "↩", "unsupported": "⛔", "xfail": "⚠", "xpass": "❗"}
REQUIRED_CASE_FIELDS = ("id", "op", "dtype", "variant", "status")


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
        "conformance.json": json.dumps(report, indent=1, sort_keys=False) + "\n",
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


def load(path: Path) -> dict:
    """Read and check a conformance.json; raise ReportError naming the file and the problem."""
    path = Path(path)
    if not path.is_file():
        raise ReportError(f"{path}: file not found")
    try:
        report = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ReportError(f"{path}: not valid JSON (truncated?): {exc}") from exc
    if not isinstance(report, dict) or report.get("schema") != SCHEMA:
        found = report.get("schema") if isinstance(report, dict) else type(report).__name__
        raise ReportError(f"{path}: schema is {found!r}, expected {SCHEMA!r}")
    for key in ("vendor", "device", "torch", "triton", "collected", "cases"):
        if key not in report:
            raise ReportError(f"{path}: missing field {key!r}")
    for i, case in enumerate(report["cases"]):
        missing = [f for f in REQUIRED_CASE_FIELDS if f not in case]
        if missing:
            raise ReportError(f"{path}: case #{i} lacks field(s) {missing}")
    return report


def cells(report: dict) -> dict:
    """(op, dtype) -> Counter of statuses."""
    table = defaultdict(Counter)
    for case in report["cases"]:
        table[case["op"], case["dtype"]][case["status"]] += 1
    return table


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


def _cell_text(counts: Counter) -> str:
    status = cell_status(counts)
    total = sum(counts.values())
    if status == "unsupported":
        return MARKS[status]
    text = f"{MARKS[status]} {counts['pass']}/{total}"
    extras = [f"{counts[s]} {s}" for s in ("fallback", "xfail", "fail", "error", "xpass", "unsupported") if counts[s]]
    return text + (f" ({', '.join(extras)})" if extras else "")


def summary_line(report: dict) -> str:
    table = cells(report)
    tested = [c for c in table.values() if cell_status(c) != "unsupported"]
    passed = sum(cell_status(c) in ("pass", "fallback", "xfail") for c in tested)
    s = report["summary"]
    return (f"cells passed: {passed} / {len(tested)}; cases: {s['pass']} pass, {s['fail']} fail, {s['error']} error, "
            f"{s['fallback']} fallback, {s['xfail']} known failures, {s['xpass']} unexpected passes, "
            f"{s['unsupported']} unsupported")


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
        "Marks: ✅ all cases pass · ❌ failures · ↩ deliberate ATen fallback · ⚠ known failure · "
        "❗ known failure now passing · ⛔ dtype unsupported by the vendor · blank: not declared.",
        "",
        "| operator | " + " | ".join(dtypes) + " |",
        "|---|" + "---|" * len(dtypes),
    ]
    for op in ops:
        row = []
        for dtype in dtypes:
            counts = table.get((op, dtype))
            text = _cell_text(counts) if counts else ""
            if extra and (op, dtype) in extra:
                text += f" {extra[op, dtype]}"
            row.append(text)
        lines.append(f"| {op} | " + " | ".join(row) + " |")
    if report.get("notes"):
        lines += ["", "Vendor notes:", ""] + [f"- {n}" for n in report["notes"]]
    problems = [c for c in report["cases"] if c["status"] in ("fail", "error", "xpass", "fallback", "xfail",
                                                              "unsupported")]
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
