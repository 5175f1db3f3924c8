"""The support matrix joined with perf: operator x dtype cells with conformance status and speedup.

Conformance results come from ``conformance.json`` in the same folder (``pytest conformance
--report-dir DIR`` writes it); without it the matrix shows perf alone and says how to join.
Outputs: support_matrix.md (the conformance Markdown with speedups added to its cells) and a
self-contained support_matrix.html (inline CSS, no scripts, no external files).
"""

from __future__ import annotations

import html
from collections import Counter, defaultdict
from pathlib import Path
from types import SimpleNamespace

from gems.perf.charts import CAVEAT, interpreted
from gems.perf.results import geomean, read_csv, row_speedup, write_atomic
from gems.report import conformance_report
from gems.report.conformance_report import (
    DTYPE_ORDER,
    LEGEND,
    MARKS,
    ReportError,
    cell_status,
    cell_text,
    cells,
    problem_cases,
)

COLOURS = {"pass": "#d8f3dc", "fail": "#ffccd5", "fallback": "#fff3bf", "unsupported": "#e9ecef",
           "xfail": "#ffe8cc", "xpass": "#e5dbff", None: "#ffffff"}
# How a cell names the perf cases that gave no speedup (perf.csv's status words mean little to a reader).
PERF_WORDS = {"mismatch": "perf: result differs from ATen", "fallback": "perf: ATen's kernel ran",
              "unsupported": "perf: not run", "no-perf": "not benchmarked", "oom": "perf: out of memory",
              "error": "perf: error"}


def perf_cells(rows) -> dict:
    """(op, dtype) -> (text, detail): the geometric-mean speedup of the ok cases, and any other statuses."""
    grouped = defaultdict(list)
    for row in rows:
        grouped[row["op"], row["dtype"]].append(row)
    result = {}
    for key, group in grouped.items():
        speedup = geomean([row_speedup(r) for r in group])
        others = Counter(r["status"] for r in group if r["status"] != "ok")
        parts = [f"{speedup:.3g}x"] if speedup else []
        parts += [f"({PERF_WORDS.get(status, status)}" + (f" ×{n}" if n > 1 else "") + ")"
                  for status, n in sorted(others.items())]
        detail = "; ".join(f"{r['shape'] or '-'}: {r['status']}" + (f" {row_speedup(r):.3g}x" if row_speedup(r) else "")
                           + (f" ({r['reason']})" if r["status"] != "ok" and r["reason"] else "") for r in group)
        result[key] = (" ".join(parts), speedup, detail)
    return result


def _load_conformance(out: Path, vendor: str):
    """(report or None, note for the reader)."""
    path = conformance_report.find(out)
    if not path.is_file():
        return None, (f"No conformance.json in {out}: this matrix shows perf only. Run `pytest conformance "
                      f"--vendor {vendor} --report-dir {out}` and then gems-perf again to join both.")
    try:
        report = conformance_report.load(path)
    except ReportError as exc:
        return None, f"Conformance results not joined: {exc}"
    if report["vendor"] != vendor:
        return None, f"Conformance results not joined: {path} is for vendor {report['vendor']!r}, not {vendor!r}."
    return report, f"Conformance: {_run_name(report)}."


def _run_name(env: dict) -> str:
    """How a joined output names a run it joins: kind, date and gems commit."""
    kind = f"{env['mode']} mode" if "mode" in env else f"{env.get('suite') or 'unknown'} suite"
    return f"{kind}, {env.get('date') or 'undated'}, commit {env.get('commit') or 'unknown'}"


def _order(dtypes) -> list[str]:
    return [d for d in DTYPE_ORDER if d in dtypes] + sorted(set(dtypes) - set(DTYPE_ORDER))


def _speed_note(env: dict) -> str:
    text = "Speedups are geometric means over the perf cases of the cell (see perf_summary.md for the rule)."
    return text + (f" {CAVEAT}" if interpreted(env) else "")


def markdown(run, report, note: str, perf: dict) -> str:
    speed = _speed_note(run.env)
    if report is not None:
        text = conformance_report.matrix_markdown(report, extra={k: v[0] for k, v in perf.items() if v[0]})
        conf_cells = set(cells(report))
        missing = sorted(k for k in perf if k not in conf_cells)
        text += f"\n{speed} {note}\n"
        if missing:
            text += ("\n## Perf cases without conformance results\n\n| operator | dtype | perf |\n|---|---|---|\n"
                     + "".join(f"| {op} | {dtype} | {perf[op, dtype][0]} |\n" for op, dtype in missing))
        return text
    env = run.env
    ops = sorted({op for op, _ in perf})
    dtypes = _order({d for _, d in perf})
    lines = [f"# Support matrix: {env['vendor']} (perf only)", "",
             f"Device: {env['device']}; torch {env['torch']}; triton {env['triton']}; {env['date']}.", "",
             note, "", speed, "",
             "| operator | " + " | ".join(dtypes) + " |", "|---|" + "---|" * len(dtypes)]
    for op in ops:
        lines.append(f"| {op} | " + " | ".join(perf.get((op, d), ("",))[0] for d in dtypes) + " |")
    return "\n".join(lines) + "\n"


_CSS = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #212529; }
table { border-collapse: collapse; font-size: 0.9em; }
th, td { border: 1px solid #ced4da; padding: 0.3em 0.6em; text-align: center; white-space: nowrap; }
th { background: #f1f3f5; position: sticky; top: 0; }
td.op { text-align: left; font-family: monospace; }
.fast { color: #2b8a3e; font-weight: 600; }
.slow { color: #c92a2a; font-weight: 600; }
.muted { color: #868e96; }
.caveat { color: #862e9c; font-weight: 600; }
.legend span { display: inline-block; padding: 0.1em 0.5em; margin: 0 0.4em 0.3em 0; border: 1px solid #ced4da; }
table.cases td { text-align: left; }
table.cases td.why { white-space: normal; max-width: 60em; }
"""


def _html_cell(conf: Counter | None, perf_entry) -> str:
    status = cell_status(conf) if conf else None
    parts, tips = [], []
    if conf:
        parts.append(html.escape(cell_text(conf)))
        tips.append("conformance: " + ", ".join(f"{n} {s}" for s, n in sorted(conf.items())))
    if perf_entry:
        text, speedup, detail = perf_entry
        css = "muted" if speedup is None else ("fast" if speedup >= 1.0 else "slow")
        parts.append(f'<span class="{css}">{html.escape(text)}</span>')
        tips.append("perf: " + detail)
    title = html.escape(" | ".join(tips), quote=True)
    return f'<td style="background:{COLOURS[status]}" title="{title}">{"<br>".join(parts)}</td>'


def _html_notes_and_problems(report) -> str:
    """The vendor's notes and the table of cases that did not simply pass, as the Markdown matrix has them."""
    if report is None:
        return ""
    out = []
    if report.get("notes"):
        out.append("<h2>Vendor notes</h2>\n<ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in report["notes"])
                   + "</ul>")
    problems = problem_cases(report)
    if problems:
        rows = "".join(f'<tr><td class="op">{html.escape(c["id"])}</td><td>{MARKS.get(c["status"], "")} '
                       f'{html.escape(c["status"])}</td><td class="why">{html.escape(c.get("message", ""))}</td></tr>'
                       for c in problems)
        out.append(f"<h2>Cases that did not simply pass ({len(problems)})</h2>\n<table class=\"cases\">\n"
                   f"<thead><tr><th>case</th><th>status</th><th>why</th></tr></thead>\n<tbody>{rows}</tbody></table>")
    return "\n".join(out)


def html_page(run, report, note: str, perf: dict) -> str:
    env = run.env
    conf = cells(report) if report is not None else {}
    keys = set(conf) | set(perf)
    ops = sorted({op for op, _ in keys})
    dtypes = _order({d for _, d in keys})
    head = "".join(f"<th>{html.escape(d)}</th>" for d in dtypes)
    body = []
    for op in ops:
        tds = "".join(_html_cell(conf.get((op, d)), perf.get((op, d))) if (op, d) in keys else "<td></td>"
                      for d in dtypes)
        body.append(f'<tr><td class="op">{html.escape(op)}</td>{tds}</tr>')
    legend = "".join(f'<span style="background:{COLOURS[s]}">{html.escape(MARKS[s])} {html.escape(LEGEND[s])}</span>'
                     for s in ("pass", "fail", "fallback", "xfail", "xpass", "unsupported"))
    summary = html.escape(conformance_report.summary_line(report)) if report is not None else ""
    caveat = f'<p class="caveat">{html.escape(CAVEAT)}</p>' if interpreted(env) else ""
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>gems support matrix: {html.escape(env['vendor'])}</title>
<style>{_CSS}</style></head>
<body>
<h1>Support matrix: {html.escape(env['vendor'])}</h1>
<p>Device: {html.escape(str(env['device']))}; driver: {html.escape(str(env.get('driver') or 'n/a'))};
torch {html.escape(env['torch'])}; triton {html.escape(env['triton'])}; perf {html.escape(run.suite)} suite,
{html.escape(env['date'])}.</p>
<p>{html.escape(note)}</p>
<p>{summary}</p>
<p class="legend">{legend}<span>blank: not declared</span></p>
<p>Each cell: conformance cases passed / cases, then those that did not simply pass; then the geometric-mean
speedup over ATen (<span class="fast">green</span>: gems faster, <span class="slow">red</span>: slower) or why
there is none (<span class="muted">grey</span>). Hover a cell for details.</p>
{caveat}
<table>
<thead><tr><th>operator</th>{head}</tr></thead>
<tbody>
{chr(10).join(body)}
</tbody></table>
{_html_notes_and_problems(report)}
</body></html>
"""


def render(run, out: Path) -> dict[str, str]:
    report, note = _load_conformance(out, run.env["vendor"])
    note += f" Perf: {_run_name({**run.env, 'suite': run.suite})}."
    perf = perf_cells(run.rows)
    return {"support_matrix.md": markdown(run, report, note, perf),
            "support_matrix.html": html_page(run, report, note, perf)}


def refresh(out: Path) -> list[Path]:
    """Rewrite the joined support matrix (md and html) from what ``out`` holds now, so that no joined
    output keeps an older run: ``pytest conformance`` calls it after writing conformance.json, and
    gems-perf writes it after perf.csv. Without a perf.csv there is nothing to join: []."""
    out = Path(out)
    if not (out / "perf.csv").is_file():
        return []
    rows = read_csv(out / "perf.csv")
    if not rows:
        return []
    fields = ("vendor", "device", "driver", "torch", "triton", "date", "commit", "timer")
    env = {k: rows[0].get(k) or None for k in fields}
    run = SimpleNamespace(env=env, suite=rows[0].get("suite") or "unknown", rows=rows)
    return [write_atomic(out / name, text) for name, text in render(run, out).items()]
