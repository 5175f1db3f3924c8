"""models.json, models.md and models.csv in the run folder: one entry per (model, dtype), newest run wins.

models.json holds everything (answers, the whole coverage table, speed rows, the environment); models.md is
the page a reviewer reads (gems-gate promote copies all three into reports/<vendor>/); models.csv has one row
per speed workload and one per answers quantity, for spreadsheets. Files are written whole or not at all.
"""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

from gems.models.errors import ModelError

FILES = ("models.json", "models.md", "models.csv")
SCHEMA = "gems.models/1"


def default_dir(vendor: str) -> Path:
    from gems.report.environment import default_run_dir

    return default_run_dir(vendor)


def check_out_dir(out: Path) -> Path:
    """Create ``out`` and prove it writable before the model runs: no half-finished run for a bad folder."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / f".models-write-check-{os.getpid()}"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise ModelError(f"--out: cannot write to {out}: {exc.strerror or exc}") from exc
    return out


def load(out: Path) -> dict:
    path = Path(out) / "models.json"
    if not path.is_file():
        return {"schema": SCHEMA, "models": []}
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ModelError(f"{path}: not valid JSON (truncated?): {exc}; move it away to start afresh") from exc
    if data.get("schema") != SCHEMA:
        raise ModelError(f"{path}: schema {data.get('schema')!r}, expected {SCHEMA!r}; move it away to start afresh")
    return data


def write(out: Path, run) -> list[Path]:
    """Merge ``run`` (a ModelRun) into the folder's models.json and rewrite the three files."""
    from gems.report.environment import environment
    from gems.runtime import selection

    data = load(out)
    entry = {**run.as_dict(), "environment": environment(selection.current())}
    data["models"] = [m for m in data["models"] if (m["name"], m["dtype"]) != (run.name, run.dtype)] + [entry]
    data["models"].sort(key=lambda m: (m["name"], m["dtype"]))
    texts = {"models.json": json.dumps(data, indent=1) + "\n", "models.md": markdown(data),
             "models.csv": table_csv(data)}
    written = []
    for name, text in texts.items():
        path = Path(out) / name
        partial = path.with_name(f".{name}.{os.getpid()}.tmp")
        partial.write_text(text)
        partial.replace(path)
        written.append(path)
    return written


def _fmt(value, digits=3) -> str:
    if value is None:
        return "—"
    return f"{value:.{digits}g}" if isinstance(value, float) else str(value)


def answers_lines(model: dict) -> list[str]:
    if not model.get("answers"):
        return []
    if any("patched_error" in a for a in model["answers"]):
        return _patched_answers_lines(model)
    lines = ["| quantity | ATen's largest difference | gems' | allowed | |", "|---|---|---|---|---|"]
    for a in model["answers"]:
        worst = f" ({a['worst']})" if a.get("worst") else ""
        lines.append(f"| {a['quantity']}{worst} | {_fmt(a['aten_error'])} | {_fmt(a['gems_error'])} | "
                     f"{_fmt(a['allowed'])} | {'✅' if a['ok'] else '❌'} |")
    return lines


def _patched_answers_lines(model: dict) -> list[str]:
    """--patched: the patched model's difference (gems.patch) beside ATen's and gems'."""
    lines = ["| quantity | ATen's largest difference | gems' | patched gems' | allowed | |",
             "|---|---|---|---|---|---|"]
    for a in model["answers"]:
        worst = f" ({a['worst']})" if a.get("worst") else ""
        patched_worst = f" ({a['patched_worst']})" if a.get("patched_worst") else ""
        verdict = "✅" if a["ok"] else "❌"
        lines.append(f"| {a['quantity']}{worst} | {_fmt(a['aten_error'])} | {_fmt(a['gems_error'])} | "
                     f"{_fmt(a['patched_error'])}{patched_worst} | {_fmt(a['allowed'])} | {verdict} |")
    return lines


def speed_lines(model: dict) -> list[str]:
    if not model.get("speed"):
        return []
    if model.get("patched"):
        return _patched_speed_lines(model)
    lines = ["| workload | batch | tokens | ATen ms | gems ms | ATen / gems time | gems tokens/s | gems calls "
             "replayed natively |",
             "|---|---|---|---|---|---|---|---|"]
    for r in model["speed"]:
        if "error" in r:
            lines.append(f"| {r['workload']} | {r['batch']} | {r['tokens']} | error: {r['error']} | | | | |")
            continue
        lines.append(f"| {r['workload']} | {r['batch']} | {r['tokens']} | {r['aten_ms']:.2f} | {r['gems_ms']:.2f} | "
                     f"{r['speedup']:.3f}x | {r['gems_tokens_per_s']:.0f} | {_native(r, 'gems')} |")
    return lines + _native_note(model)


def _native(row: dict, side: str) -> str:
    """The share of the side's gems calls in the timed runs that the native layer replayed ("—": none served,
    as in a CUDA graph's replay, or not counted)."""
    if f"{side}_native_share" not in row:
        return "—"
    return f"{100 * row[f'{side}_native_share']:.1f}% of {row[f'{side}_calls']}"


def _native_note(model: dict) -> list[str]:
    if not any("gems_native_share" in r for r in model["speed"]):
        return []
    return ["", "Replayed natively: calls of the timed runs that the native layer served from C++ without Python "
            "(gems.native.call_counts()); the others took the Python path (gems.native.python_reasons() says why)."]


def _mib(row: dict, side: str) -> str:
    if f"{side}_peak_mib" not in row:
        return "not measured"
    return f"{row[f'{side}_peak_mib']:.0f} ({row[f'{side}_step_mib']:.0f})"


def _patched_speed_lines(model: dict) -> list[str]:
    """--patched: ATen, gems and patched gems side by side, and each side's peak memory."""
    lines = ["| workload | batch | tokens | ATen ms | gems ms | patched ms | ATen / gems | ATen / patched | peak MiB "
             "ATen (step) | gems | patched | patched / ATen peak | replayed natively: gems / patched |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in model["speed"]:
        if "error" in r:
            lines.append(f"| {r['workload']} | {r['batch']} | {r['tokens']} | error: {r['error']} |" + " |" * 9)
            continue
        ratio = (f"{r['patched_peak_mib'] / r['aten_peak_mib']:.3f}x" if r.get("aten_peak_mib") and
                 "patched_peak_mib" in r else "not measured")
        lines.append(f"| {r['workload']} | {r['batch']} | {r['tokens']} | {r['aten_ms']:.2f} | {r['gems_ms']:.2f} | "
                     f"{r['patched_ms']:.2f} | {r['speedup']:.3f}x | {r['patched_speedup']:.3f}x | {_mib(r, 'aten')} | "
                     f"{_mib(r, 'gems')} | {_mib(r, 'patched')} | {ratio} | {_native(r, 'gems')} / "
                     f"{_native(r, 'patched')} |")
    return lines + _native_note(model)


def patched_lines(model: dict) -> list[str]:
    """--patched: what gems.patch did to the model, and how memory was measured."""
    patched = model.get("patched")
    if not patched:
        return []
    return ["```", patched["report"], "```", f"Peak memory: {patched['memory']}."]


def coverage_lines(model: dict) -> list[str]:
    if not model.get("compute_calls"):
        return []
    served, total = model["gems_compute_calls"], model["compute_calls"]
    unserved = [r for r in model["coverage"] if r["kind"] == "compute" and r["gems"] < r["calls"]]
    lines = [f"gems served {served} of {total} compute calls ({100 * served / total:.1f}%; views, allocations, "
             "read-backs and transfers not counted)."]
    if unserved:
        lines += ["", "| compute overload not served by gems | calls | ran ATen's kernel because |", "|---|---|---|"]
        for r in unserved:
            why = r["fallback_reasons"] or ("not registered by gems" if r["not registered"] else "registered, ATen ran")
            lines.append(f"| `{r['overload']}` | {r['calls'] - r['gems']} | {why} |")
    return lines


def markdown(data: dict) -> str:
    lines = ["# Models: ATen and gems side by side", "",
             "Each model is built from its configuration with random weights, and run with ATen's kernels and with "
             "gems' in one process. Answers: the largest absolute difference from a higher-precision reference "
             "(float64 on the CPU, float32 on a GPU); gems passes within 1.5x ATen's own difference (plus a "
             "rounding floor). Speed: wall time of each workload, medians of alternating rounds; above 1x gems is "
             "faster.", ""]
    for m in data["models"]:
        env = m.get("environment", {})
        lines += [f"## {m['name']} ({m['dtype']})", "",
                  f"{m['source']}; {m['kind']}; vendor {m['vendor']} on {env.get('device', m['device'])}; torch "
                  f"{env.get('torch', '?')}, triton {env.get('triton', '?')}; {env.get('date', '')}; commit "
                  f"{env.get('commit', '?')}; {m['seconds']:.0f} s.", ""]
        for part in (answers_lines(m), speed_lines(m), patched_lines(m), coverage_lines(m),
                     [f"- {n}" for n in m.get("notes", ())]):
            if part:
                lines += part + [""]
    return "\n".join(lines)


def table_csv(data: dict) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["model", "dtype", "vendor", "section", "item", "batch", "tokens", "aten", "gems", "ratio", "ok"])
    for m in data["models"]:
        for a in m.get("answers", ()):
            writer.writerow([m["name"], m["dtype"], m["vendor"], "answers", a["quantity"], "", "", a["aten_error"],
                             a["gems_error"], "", a["ok"]])
        for a in m.get("answers", ()) if m.get("patched") else ():
            writer.writerow([m["name"], m["dtype"], m["vendor"], "answers (patched)", a["quantity"], "", "",
                             a["aten_error"], a.get("patched_error"), "", a.get("patched_ok")])
        for r in m.get("speed", ()):
            writer.writerow([m["name"], m["dtype"], m["vendor"], "speed ms", r["workload"], r["batch"], r["tokens"],
                             r.get("aten_ms"), r.get("gems_ms"), r.get("speedup"), "error" not in r])
            if m.get("patched"):
                writer.writerow([m["name"], m["dtype"], m["vendor"], "speed ms (patched)", r["workload"], r["batch"],
                                 r["tokens"], r.get("aten_ms"), r.get("patched_ms"), r.get("patched_speedup"),
                                 "error" not in r])
                writer.writerow([m["name"], m["dtype"], m["vendor"], "peak MiB (patched)", r["workload"], r["batch"],
                                 r["tokens"], r.get("aten_peak_mib"), r.get("patched_peak_mib"),
                                 r["patched_peak_mib"] / r["aten_peak_mib"] if r.get("aten_peak_mib") else None,
                                 ""])
            for side in ("gems", "patched"):  # calls served (aten column), replayed natively (gems column)
                if f"{side}_native_share" in r:
                    calls = r[f"{side}_calls"]
                    writer.writerow([m["name"], m["dtype"], m["vendor"], f"replayed natively ({side})", r["workload"],
                                     r["batch"], r["tokens"], calls, round(calls * r[f"{side}_native_share"]),
                                     r[f"{side}_native_share"], ""])
        if m.get("compute_calls"):
            writer.writerow([m["name"], m["dtype"], m["vendor"], "coverage", "compute calls served", "", "",
                             m["compute_calls"], m["gems_compute_calls"], m["gems_compute_calls"] / m["compute_calls"],
                             ""])
    return buffer.getvalue()


def console(model: dict) -> str:
    """What gems-perf prints at the end: the same tables as models.md, for one model."""
    parts = [f"{model['name']} ({model['dtype']}) on {model['vendor']}"]
    for part in (answers_lines(model), speed_lines(model), patched_lines(model), coverage_lines(model)):
        if part:
            parts.append("\n".join(part))
    return "\n\n".join(parts)


def perf_summary_lines(out: Path) -> list[str]:
    """The models section of perf_summary.md: one row per model and workload (models.md has the rest)."""
    path = Path(out) / "models.json"
    if not path.is_file():
        return []
    data = load(out)
    lines = ["", "## Models", "", "From models.json in this folder (`gems-perf --model`; models.md has answers and "
             "coverage).", "", "| model | dtype | answers | compute calls served by gems | workload | ATen / gems "
             "time |", "|---|---|---|---|---|---|"]
    for m in data["models"]:
        verdict = ("✅" if all(a["ok"] for a in m["answers"]) else "❌") if m.get("answers") else "—"
        share = f"{100 * m['gems_compute_calls'] / m['compute_calls']:.1f}%" if m.get("compute_calls") else "—"
        for r in m.get("speed") or [{"workload": "—"}]:
            ratio = f"{r['speedup']:.3f}x" if "speedup" in r else r.get("error", "—")
            batch = f" (batch {r['batch']})" if "batch" in r else ""
            lines.append(f"| {m['name']} | {m['dtype']} | {verdict} | {share} | {r['workload']}{batch} | {ratio} |")
    return lines
