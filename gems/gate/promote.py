"""Promote a candidate run to a vendor's committed baseline, ``reports/<vendor>/``.

The run is validated as the gate validates it. A run with failures is refused unless forced with a
reason; every promotion is logged in ``reports/<vendor>/PROMOTIONS.md`` (forced ones with the reason).
The baseline keeps the run's conformance results in their compact, reviewable form
(``conformance_cells.json``, gems.report.conformance_report.compact_text), which is all the gate reads;
the case-level ``conformance.json`` stays with the run, less the seconds of each cell (``durations.json``,
which orders the next runs' cells, gems/report/durations.py). The new baseline is assembled beside the old one
and swapped in, so a failure leaves the old one whole.
"""

from __future__ import annotations

import datetime
import shutil
import tempfile
from pathlib import Path

from gems.gate.inputs import COMPACT_FILE, CONFORMANCE_FILE, PERF_FILE, GateInputError, load_perf, load_run
from gems.report import durations
from gems.report.conformance_report import compact_text, status_counts

MATRIX_FILES = ("support_matrix.md", "support_matrix.csv", "support_matrix.html")
CONFORMANCE_FILES = (CONFORMANCE_FILE, COMPACT_FILE, *MATRIX_FILES)  # a baseline keeps the compact one only
PERF_FILES = (PERF_FILE, "perf_summary.md")
MODEL_FILES = ("models.json", "models.md", "models.csv")  # gems-perf --model, beside the operator results
CHART_SUFFIXES = (".png", ".svg")  # gems-perf's charts, beside perf.csv
LOG = "PROMOTIONS.md"
FAILING_CASES = ("fail", "error", "xpass")
FAILING_ROWS = ("mismatch", "error")


class PromoteRefused(Exception):
    """The candidate has failures and the promotion was not forced."""


def failures(run) -> list[str]:
    found = [f"{c['id']} ({c['status']})" for c in run.conformance["cases"] if c["status"] in FAILING_CASES]
    found += [f"perf {r['op']} {r['dtype']} {r['shape']} ({r['status']})" for r in run.perf or ()
              if r["status"] in FAILING_ROWS]
    return found


def _perf_files(directory: Path) -> list[str]:
    return [n for n in PERF_FILES if (directory / n).is_file()] + sorted(
        p.name for p in directory.iterdir() if p.is_file() and p.suffix in CHART_SUFFIXES)


def _is_result(name: str) -> bool:
    # (models files are not among them: a promotion without them keeps the baseline's, each of whose entries
    # records its own environment)
    return name in CONFORMANCE_FILES + PERF_FILES or Path(name).suffix in CHART_SUFFIXES


def _copy(source: Path, target: Path) -> None:
    if source.is_dir():
        shutil.copytree(source, target)
    else:
        shutil.copy2(source, target)


def _log_entry(run, failed: list[str], reason: str | None) -> str:
    r = run.conformance
    s = status_counts(r)
    result = f"{s['pass']} pass, {s['fail']} fail, {s['error']} error" + (", perf" if run.perf else ", no perf")
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    why = f"forced with {len(failed)} failure(s): {reason}" if failed else (reason or "")
    cells = [now, r.get("date", ""), r["device"], r["torch"], r["triton"], r["mode"], result, why]
    return "| " + " | ".join(str(c).replace("|", "/").replace("\n", " ") for c in cells) + " |\n"


def _log_header(vendor: str) -> str:
    return (f"# Baseline promotions: {vendor}\n\nEvery run promoted to this directory by `gems-gate promote`; a "
            f"promotion of a run with failures is forced and says why.\n\n"
            f"| promoted | run date | device | torch | triton | mode | result | forced: reason |\n"
            f"|---|---|---|---|---|---|---|---|\n")


def promote(vendor: str, candidate: Path, reports: Path, force: bool = False, reason: str | None = None) -> list[str]:
    """Copy the candidate's results into ``reports/<vendor>/``; return what was done, line by line."""
    candidate, target = Path(candidate), Path(reports) / vendor
    run = load_run(candidate, perf=(candidate / PERF_FILE).is_file())
    if run.conformance["vendor"] != vendor:
        raise GateInputError(f"{run.conformance_path}: results of vendor {run.conformance['vendor']!r}, "
                             f"not {vendor!r}")
    found = failures(run)
    if found and not force:
        raise PromoteRefused(
            f"{candidate} has {len(found)} failure(s), e.g. {', '.join(found[:5])}. Fix them, or promote anyway "
            f"with --force --reason \"why this baseline is right\" (the reason is recorded in {target / LOG})")
    if force and not (reason and reason.strip()):
        raise GateInputError("--force needs --reason \"...\": a forced promotion records why")

    done = []
    target.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{vendor}.promote-", dir=target.parent))
    stage.chmod(0o755)  # mkdtemp's 0700 would become the committed directory's mode
    try:
        (stage / COMPACT_FILE).write_text(compact_text(run.conformance))
        done.append(f"wrote {target / COMPACT_FILE} from {run.conformance_path} (compact: per cell, and every case "
                    f"that did not simply pass; the case-level records stay with the run)")
        seconds = durations.load(candidate / CONFORMANCE_FILE)  # load_run has read it: valid
        if seconds:  # (a compact-form candidate has no times: the baseline's file, if any, is kept)
            (stage / durations.FILE).write_text(durations.durations_text(seconds))
            done.append(f"wrote {target / durations.FILE}: the seconds of each cell, which order the next runs")
        names = [n for n in MATRIX_FILES if (candidate / n).is_file()]
        if run.perf is not None:
            names += _perf_files(candidate)
        names += [n for n in MODEL_FILES if (candidate / n).is_file()]
        for name in names:
            _copy(candidate / name, stage / name)
        if names:
            done.append(f"copied {', '.join(names)} from {candidate}")
        if run.perf is None and (target / PERF_FILE).is_file():
            done.append(_keep_or_drop_perf(run, target, stage))
        for old in sorted(target.iterdir()) if target.is_dir() else ():
            if not _is_result(old.name) and not (stage / old.name).exists():
                _copy(old, stage / old.name)  # the log and anything else kept by hand
        log = stage / LOG
        text = log.read_text() if log.is_file() else _log_header(vendor)
        log.write_text(text + _log_entry(run, found, reason))
        done.append(f"recorded the promotion in {target / LOG}" + (f" (forced: {reason})" if found else ""))
        _swap(stage, target)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    done.append(f"{target} is the new baseline for {vendor}; commit it")
    return done


def _keep_or_drop_perf(run, target: Path, stage: Path) -> str:
    """A conformance-only run keeps the old perf results only if they come from the same setup."""
    try:
        old = load_perf(target / PERF_FILE)[0]
    except GateInputError as exc:
        return f"dropped the old perf results: {exc}"
    same = all(old[f] == str(run.conformance[f]) for f in ("vendor", "device", "torch", "triton"))
    if not same:
        return (f"dropped the old perf results of {target} (torch {old['torch']}, triton {old['triton']}, "
                f"{old['device']}): they no longer match this run; perf is not gated until a perf run is promoted")
    for name in _perf_files(target):
        _copy(target / name, stage / name)
    return f"kept the perf results already in {target} (same device and versions)"


def _swap(stage: Path, target: Path) -> None:
    if not target.exists():
        stage.rename(target)
        return
    old = target.with_name(f".{target.name}.replaced")
    shutil.rmtree(old, ignore_errors=True)
    target.rename(old)
    stage.rename(target)
    shutil.rmtree(old, ignore_errors=True)
