"""The gate's verdict as Markdown for a pull-request comment: what blocks, what improved, how to reproduce."""

from __future__ import annotations

from dataclasses import dataclass, field

from gems.gate.conformance_diff import ConformanceDiff
from gems.gate.inputs import Run
from gems.gate.perf_diff import PerfDiff
from gems.report.conformance_report import summary_line

MAX_ROWS = 30  # per table: a comment must stay readable (and under GitHub's 65536 characters)


@dataclass
class Verdict:
    vendor: str
    candidate: Run
    baseline: Run
    conformance: ConformanceDiff
    perf: PerfDiff | None
    perf_note: str  # why perf was or was not gated
    notes: list = field(default_factory=list)

    @property
    def blocking(self) -> bool:
        return self.conformance.blocking or bool(self.perf and self.perf.blocking)


def marker(vendor: str) -> str:
    """First line of every verdict: lets the workflow find and update its own comment."""
    return f"<!-- gems-gate:{vendor} -->"


def _cell(text) -> str:
    return str(text).replace("|", "/").replace("\n", " ")


def _short(text: str, limit: int = 160) -> str:
    text = _cell(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _table(header: list[str], rows: list[list]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows[:MAX_ROWS]]
    if len(rows) > MAX_ROWS:
        lines.append(f"\n… and {len(rows) - MAX_ROWS} more.")
    return lines + [""]


def repro(case: dict, report: dict) -> str:
    if case.get("repro"):
        return case["repro"]
    quick = " --quick" if report["mode"] == "quick" else ""
    return f'pytest "conformance/test_conformance.py::test_case[{case["id"]}]" --vendor {report["vendor"]}{quick}'


def _describe(run: Run) -> str:
    r = run.conformance
    return (f"`{run.directory}`: {r['device']}, torch {r['torch']}, triton {r['triton']}, {r['mode']} mode, "
            f"{r.get('date', 'undated')}")


def _speedup(value) -> str:
    return "n/a" if value is None else f"{value:.3g}x"


def _blocking_sections(v: Verdict) -> list[str]:
    c, out = v.conformance, []
    if c.regressions:
        out += ["### ❌ Cells that passed in the baseline and fail now", ""]
        out += _table(["operator", "dtype", "baseline", "now", "newly failing cases"],
                      [[ch.op, ch.dtype, ch.before, ch.after, len(ch.cases)] for ch in c.regressions])
        cases = [case for ch in c.regressions for case in ch.cases]
        out += ["Newly failing cases:", ""]
        out += _table(["case", "status", "why", "reproduce"],
                      [[case["id"], case["status"], _short(case.get("message", "")),
                        f"`{repro(case, v.candidate.conformance)}`"] for case in cases])
    if c.vanished:
        out += ["### ❌ Cases that vanished (collected count dropped)", ""]
        out += _table(["operator", "collected in baseline", "collected now", "missing cases"],
                      [[x.op, x.before, x.after, _short(x.describe(), 600)] for x in c.vanished])
    if c.unregistered:
        out += ["### ❌ Operators registered without conformance cases", "",
                f"gems registers these for `{v.vendor}`, but the candidate run has no case for them. Gate a run "
                f"of the whole suite (no --ops/--dtypes filter); an operator without samples needs them in its "
                f"OpSpec, or its overloads in the vendor's get_unused_ops().", ""]
        out += _table(["operator", "overloads registered"],
                      [[op, ", ".join(overloads)] for op, overloads in c.unregistered.items()])
    p = v.perf
    if p and p.regressions:
        out += [f"### ❌ Perf regressions (geometric-mean speedup down more than {p.threshold_pct:g}%)", ""]
        out += _table(["operator", "rows", "baseline speedup", "now", "change", "first measurement"],
                      [[x.op, x.rows, _speedup(x.before), _speedup(x.after), f"{x.change_pct:+.1f}%",
                        _speedup(x.first) if x.first is not None else "not re-measured"] for x in p.regressions])
    if p and p.broken_rows:
        out += ["### ❌ Perf rows that ran correctly in the baseline and do not now", ""]
        out += _table(["operator", "dtype", "shape", "now", "why"],
                      [[r.op, r.dtype, r.shape, r.after, _short(r.reason)] for r in p.broken_rows])
    if p and p.vanished_rows:
        out += ["### ❌ Perf rows that vanished (run gems-perf with the baseline's suite)", ""]
        out += _table(["operator", "dtype", "shape", "baseline status"],
                      [[r.op, r.dtype, r.shape, r.before] for r in p.vanished_rows])
    return out


def _reported_sections(v: Verdict) -> list[str]:
    c, p, out = v.conformance, v.perf, []
    if c.newly_passing:
        out += ["#### ✅ Newly passing cells", ""]
        out += _table(["operator", "dtype", "baseline", "now"],
                      [[x.op, x.dtype, x.before or "(new cell)", x.after] for x in c.newly_passing])
    if p and p.faster:
        out += [f"#### ⚡ Faster operators (geometric-mean speedup up more than {p.threshold_pct:g}%)", ""]
        out += _table(["operator", "rows", "baseline speedup", "now", "change"],
                      [[x.op, x.rows, _speedup(x.before), _speedup(x.after), f"{x.change_pct:+.1f}%"]
                       for x in p.faster])
    new_ops = sorted(set(c.new_ops) | set(p.new_ops if p else ()))
    if new_ops:
        out += ["#### 🆕 New operators", ""]
        out += _table(["operator", "conformance cases", "perf speedup"],
                      [[op, c.new_ops.get(op, 0), _speedup(p.new_ops.get(op)) if p and op in p.new_ops else "—"]
                       for op in new_ops])
    if c.grown:
        out += ["#### More cases", ""]
        out += _table(["operator", "collected in baseline", "collected now"], [list(g) for g in c.grown])
    if c.other_changes:
        out += ["#### Other cell changes (review: coverage may have moved to known failures or fallbacks)", ""]
        out += _table(["operator", "dtype", "baseline", "now", "why"],
                      [[x.op, x.dtype, x.before or "(new cell)", x.after or "(gone)",
                        _short(x.cases[0].get("message", "")) if x.cases else ""] for x in c.other_changes])
    if p and p.not_reproduced:
        out += ["#### Slowdowns not reproduced when re-measured", ""]
        out += _table(["operator", "baseline speedup", "first measurement", "re-measured"],
                      [[x.op, _speedup(x.before), _speedup(x.first), _speedup(x.after)] for x in p.not_reproduced])
    if p and p.other_rows:
        out += ["#### Perf row status changes", ""]
        out += _table(["operator", "dtype", "shape", "baseline", "now", "why"],
                      [[r.op, r.dtype, r.shape, r.before, r.after, _short(r.reason)] for r in p.other_rows])
    return out


def render(v: Verdict) -> str:
    c, p = v.conformance, v.perf
    problems = [(len(c.regressions), "regressed conformance cell(s)"),
                (len(c.vanished), "operator(s) with vanished cases"),
                (len(c.unregistered), "operator(s) without cases"),
                (len(p.regressions) if p else 0, "perf regression(s)"),
                (len(p.broken_rows) if p else 0, "broken perf row(s)"),
                (len(p.vanished_rows) if p else 0, "vanished perf row(s)")]
    title = "❌ blocked" if v.blocking else "✅ passes"
    lines = [marker(v.vendor), f"## gems gate · {v.vendor} · {title}", ""]
    if v.blocking:
        lines += ["**Blocking:** " + ", ".join(f"{n} {what}" for n, what in problems if n) + ".", ""]
    lines += [f"- Candidate {_describe(v.candidate)}", f"- Baseline {_describe(v.baseline)}", ""]
    lines += _blocking_sections(v)
    reported = _reported_sections(v)
    if reported:
        lines += ["### Not blocking", ""] + reported
    if reported and not v.blocking:
        lines += ["To make this run the vendor's new baseline, so that these gains are kept from now on:", "",
                  f"    gems-gate promote --vendor {v.vendor} --candidate {v.candidate.directory}", ""]
    lines += ["### Summary", "",
              f"- Conformance now: {summary_line(v.candidate.conformance)}",
              f"- Conformance baseline: {summary_line(v.baseline.conformance)}"]
    if c.still_failing:
        lines.append(f"- {c.still_failing} case(s) fail in both runs (not blocking; see the support matrix).")
    if p and p.overall:
        lines.append(f"- Perf: geometric-mean speedup {_speedup(p.overall[1])} now, {_speedup(p.overall[0])} in the "
                     f"baseline, over the rows measured in both.")
    lines.append(f"- {v.perf_note}")
    lines += [f"- {note}" for note in v.notes + (p.notes if p else [])]
    return "\n".join(lines) + "\n"


def render_unusable(vendor: str, message: str) -> str:
    return "\n".join([
        marker(vendor), f"## gems gate · {vendor} · ⚠️ unusable input", "",
        "The gate could not judge this run, so it does not pass:", "", "```", message, "```", "",
    ])
