"""perf.csv (one row per case, fixed columns) and perf_summary.md (geometric means, slow operators, problems;
the models of models.json in the same folder)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from gems.models import report as model_report
from gems.perf import charts, matrix
from gems.perf.results import STATUSES, aggregates, csv_text, row_speedup, write_atomic

SPEEDUP_RULE = (
    "A case's speedup is ATen's time divided by gems' (above 1: gems is faster). For a *large* shape it "
    "is kernel time, from the timer named above (on a GPU, `triton.testing.do_bench` with the L2 cache "
    "flushed before each call): the `speedup` column, aten_ms / gems_ms, medians. For a *small* shape "
    "it is per-call time: N calls back to back, one synchronize at the end, so host overhead counts "
    "(aten_percall_us / gems_percall_us, i.e. 1 / percall_ratio), because do_bench's flush hides host "
    "time shorter than the flush. Aggregates are geometric means of these per-case speedups over the "
    "cases with status `ok`; a case whose output differs from ATen's (`mismatch`) or that ran ATen's "
    "kernel (`fallback`) never counts as a speedup."
)




def _fmt(x, suffix="x") -> str:
    return f"{x:.4g}{suffix}" if x is not None else "n/a"


def summary_markdown(run, charts=()) -> str:
    env, rows = run.env, run.rows
    agg = aggregates(rows)
    counts = run.counts()
    families = {r["op"]: r["family"] for r in rows}
    best_gbps = defaultdict(float)
    for row in rows:
        if row_speedup(row) is not None and row.get("gbps"):
            best_gbps[row["op"]] = max(best_gbps[row["op"]], float(row["gbps"]))
    lines = [
        f"# Perf summary: {env['vendor']}",
        "",
        f"Device: {env['device']}; driver: {env.get('driver') or 'n/a'}; torch {env['torch']}; "
        f"triton {env['triton']}; {env['date']}; gems commit {env.get('commit') or 'unknown'}.",
        f"Suite: {run.suite}. Timer: {env['timer']}; cache flush: {env['flush']}; "
        f"{run.plan.rounds} alternating ATen/gems rounds for kernel time, {run.plan.percall_rounds} for per-call time.",
        "Copy bandwidth (device-to-device `copy_`, bytes read + written, measured in this run): "
        + (f"{run.copy_gbps:.1f} GB/s." if run.copy_gbps else "not measured."),
        "",
    ]
    if run.devices:
        lines += [f"Timed on {len(run.devices)} devices at once (indices {', '.join(map(str, run.devices))}), one "
                  "process and every n-th case each; the copy bandwidth above is the mean of theirs, and a case's "
                  "pct_copy_bw is of its own device's.", ""]
    lines += [note for text in run.notes for note in (text, "")]
    if env.get("aten_on_device") is False:
        lines += ["> ATen has no kernels on this device (as on gems' simulated device): gems was timed alone and "
                  "checked against the float64 oracle only; there are no ATen times and no speedups. The gems "
                  "times are listed below.", ""]
    if env["vendor"] == "interpreter" or env["timer"] == "wall-clock":
        lines += ["> These are wall-clock times of the Triton interpreter on CPU (ATen on one thread, like the "
                  "interpreter): they show that the pipeline works and say nothing about kernel speed.", ""]
    lines += [
        f"Overall geometric-mean speedup: **{_fmt(agg['overall'])}** over {agg['cases']} cases with status ok "
        f"(of {len(rows)}).",
        "",
        "How to read: " + SPEEDUP_RULE,
        "",
        "## Cases by status",
        "",
        "| " + " | ".join(STATUSES) + " |",
        "|" + "---|" * len(STATUSES),
        "| " + " | ".join(str(counts[s]) for s in STATUSES) + " |",
        "",
    ]
    for key, title in (("family", "family"), ("dtype", "dtype")):
        lines += [f"## Speedup by {title}", "", f"| {title} | cases ok | geomean speedup |", "|---|---|---|"]
        lines += [f"| {name} | {n} | {_fmt(g)} |" for name, (g, n, _, _) in agg[key].items()]
        lines.append("")
    lines += ["## Speedup by operator", "",
              "| operator | family | cases ok | geomean speedup | min | max | best GB/s | best % of copy |",
              "|---|---|---|---|---|---|---|---|"]
    for op, (g, n, lo, hi) in sorted(agg["op"].items(), key=lambda item: item[1][0]):
        gbps = best_gbps.get(op)
        pct = f"{100 * gbps / run.copy_gbps:.3g}%" if gbps and run.copy_gbps else ""
        lines.append(f"| {op} | {families[op]} | {n} | {_fmt(g)} | {_fmt(lo)} | {_fmt(hi)} | "
                     f"{f'{gbps:.4g}' if gbps else ''} | {pct} |")
    slower = [(op, g) for op, (g, _, _, _) in agg["op"].items() if g is not None and g < 1.0]
    lines += ["", f"## Operators slower than ATen ({len(slower)})", ""]
    lines += [f"- {op}: {_fmt(g)}" for op, g in sorted(slower, key=lambda item: item[1])] or ["None."]
    lines += _native_section(rows)
    flagged = [r for r in rows if r["status"] == "ok" and str(r.get("reason", "")).startswith("bandwidth not reported")]
    if flagged:
        lines += ["", f"## Bandwidth not reported ({len(flagged)})", "",
                  "Above the copy ceiling measured in this run, which no memory-bound kernel can beat: the "
                  "operator's bytes formula counts data its kernel does not move. Its speedup stands.", ""]
        lines += [f"- {r['op']} {r['dtype']} {r['shape']}: {r['reason']}" for r in flagged]
    if env.get("aten_on_device") is False:
        lines += ["", "## gems times (no ATen to compare with)", "",
                  "| operator | dtype | shape | gems ms (median) | gems us per call |", "|---|---|---|---|---|"]
        lines += [f"| {r['op']} | {r['dtype']} | {r['shape']} | {_fmt(r['gems_ms'], '')} | "
                  f"{_fmt(r['gems_percall_us'], '')} |" for r in rows if r["status"] == "ok"]
    problems = [r for r in rows if r["status"] != "ok"]
    if problems:
        lines += ["", f"## Cases not timed ({len(problems)})", "", "| operator | dtype | shape | status | reason |",
                  "|---|---|---|---|---|"]
        lines += [f"| {r['op']} | {r['dtype']} | {r['shape']} | {r['status']} | "
                  f"{str(r['reason']).replace('|', '/')} |" for r in problems]
    if charts:
        lines += ["", "## Charts", ""] + [f"![{p.stem}]({p.name})" for p in charts]
    return "\n".join(lines) + "\n"


def _native_section(rows) -> list[str]:
    """Which timed cases' gems calls did not all replay natively (native_pct below 100)."""
    measured = [r for r in rows if r["status"] == "ok" and r.get("native_pct") not in (None, "")]
    if not measured:
        return []
    partial = sorted((r for r in measured if float(r["native_pct"]) < 100.0), key=lambda r: float(r["native_pct"]))
    full = len(measured) - len(partial)
    lines = ["", "## Native replay", "",
             f"Timed gems calls replayed by the native layer (no Python): all of them in {full} of "
             f"{len(measured)} cases. A case below 100% paid the Python path on some timed calls "
             "(`gems.native.python_reasons()` says why)."]
    if partial:
        lines += ["", "| operator | dtype | shape | % replayed |", "|---|---|---|---|"]
        lines += [f"| {r['op']} | {r['dtype']} | {r['shape']} | {float(r['native_pct']):.1f} |" for r in partial]
    return lines


def write_all(run, out: Path) -> list[Path]:
    """perf.csv, the charts, perf_summary.md and the support matrix, in ``out``."""
    out = Path(out)
    written = [write_atomic(out / "perf.csv", csv_text(run.rows))]
    chart_paths = [write_atomic(out / name, png) for name, png in charts.render(run).items()]
    written += chart_paths
    summary = summary_markdown(run, chart_paths) + "\n".join(model_report.perf_summary_lines(out))
    written.append(write_atomic(out / "perf_summary.md", summary))
    written += [write_atomic(out / name, text) for name, text in matrix.render(run, out).items()]
    return written
