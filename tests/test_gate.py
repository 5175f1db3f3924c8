"""gems-gate on real conformance runs of the interpreter vendor, with injected regressions.

Real runs of the conformance suite (abs and neg, quick) are made once per pytest run: a baseline, an
unchanged rerun, a run whose neg kernel is broken by a pytest plugin, and a run of fewer dtypes.
Perf results come from a real gems-perf run (quick), altered to make one operator 20% slower. A
removed case and bad input files are derived from these runs.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from gems.gate import PASS, REGRESSION, UNUSABLE, config, inputs
from gems.gate.__main__ import main
from gems.gate.inputs import GateInputError
from gems.gate.perf_diff import gems_perf_remeasurer
from gems.gate.promote import LOG
from gems.gate.verdict import MAX_ROWS
from gems.perf.results import COLUMNS as PERF_COLUMNS
from gems.perf.results import geomean, row_speedup
from gems.report import durations
from gems.report.conformance_report import cell_status, cells, compact_text

# The real runs are built once per pytest run, whichever xdist worker asks first (conftest's once_per_run).
pytestmark = pytest.mark.xdist_group("gate")

REPO = Path(__file__).resolve().parents[1]
OPS = ("abs", "neg")
# What gems registers for the operators these runs cover; the real table is checked on its own below.
REGISTERED = {"abs": ["abs", "abs.out", "abs_"], "neg": ["neg", "neg.out", "neg_"]}

# A pytest plugin that breaks one kernel the way a bad pull request would: neg's functional
# overload runs abs's implementation. It acts after the conformance conftest has selected the
# vendor (kernels must be defined after the interpreter is switched on).
BROKEN_KERNEL_PLUGIN = '''
import pytest



@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    from gems import ops

    ops.get("neg").impls["neg"] = ops.get("abs").impls["abs"]
'''


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}  # no xdist/addopts leaking in
    return {**env, "GEMS_VENDOR": "interpreter", **extra}


def _start_conformance_run(out: Path, *extra: str, **env) -> tuple[Path, subprocess.Popen]:
    cmd = [sys.executable, "-m", "pytest", "conformance", "--vendor", "interpreter", "--quick", "--ops", ",".join(OPS),
           "--report-dir", str(out), "-q", "-p", "no:cacheprovider", *extra]
    return out, subprocess.Popen(cmd, cwd=REPO, env=_env(**env), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 text=True)


def _finish(started: tuple[Path, subprocess.Popen]) -> Path:
    out, proc = started
    output, _ = proc.communicate(timeout=600)
    assert (out / "conformance.json").is_file(), f"conformance run wrote nothing:\n{output[-4000:]}"
    return out


def _conformance_runs(root: Path) -> dict:
    (root / "plugins").mkdir()
    (root / "plugins" / "gate_broken_kernel.py").write_text(BROKEN_KERNEL_PLUGIN)
    pythonpath = os.pathsep.join(filter(None, [str(root / "plugins"), os.environ.get("PYTHONPATH")]))
    started = {  # side by side: most of each run is starting Python, torch and triton
        "base": _start_conformance_run(root / "base"),
        "same": _start_conformance_run(root / "same"),
        "broken": _start_conformance_run(root / "broken", "-p", "gate_broken_kernel", PYTHONPATH=pythonpath),
        "narrow": _start_conformance_run(root / "narrow", "--dtypes", "float32,int32"),  # fewer dtypes
    }
    return {name: str(_finish(run)) for name, run in started.items()}


@pytest.fixture(scope="session")
def runs(once_per_run):
    return {name: Path(run) for name, run in once_per_run("gate-conformance-runs", _conformance_runs).items()}


def _copy(run: Path, where: Path) -> Path:
    shutil.copytree(run, where)
    return where


def _edit_json(run: Path, edit) -> None:
    path = run / "conformance.json"
    report = json.loads(path.read_text())
    edit(report)
    path.write_text(json.dumps(report))


def gate(capsys, *argv, registered=REGISTERED, remeasure=None):
    """Run gems-gate in this process with the registry (and optionally the re-measure) stood in for."""
    seams = {"registered": lambda vendor: registered}
    if remeasure is not None:
        seams["remeasurer"] = lambda vendor, perf_args: remeasure
    code = main(["--vendor", "interpreter", *argv], **seams)
    out, err = capsys.readouterr()
    return code, out, err


# --- conformance -------------------------------------------------------------------------------


def _report(run: Path) -> dict:
    return json.loads((run / "conformance.json").read_text())


def _cell_statuses(run: Path) -> dict:
    return {key: cell_status(counts) for key, counts in cells(_report(run)).items()}


def _statuses(run: Path) -> dict:
    return {c["id"]: c["status"] for c in _report(run)["cases"]}


def test_the_broken_kernel_run_really_failed(runs):
    base, broken = _statuses(runs["base"]), _statuses(runs["broken"])
    assert base["neg::float32::contiguous"] == "pass" and broken["neg::float32::contiguous"] == "fail"
    assert {i: s for i, s in broken.items() if i.startswith("abs::")} == \
        {i: s for i, s in base.items() if i.startswith("abs::")}  # the plugin breaks neg only


def test_unchanged_run_passes(runs, capsys):
    code, out, _ = gate(capsys, "--candidate", str(runs["same"]), "--baseline", str(runs["base"]))
    assert code == PASS, out
    assert "✅ passes" in out and "❌" not in out
    assert out.startswith("<!-- gems-gate:interpreter -->")
    assert "Perf not gated for interpreter" in out  # the interpreter's gate.yaml turns perf gating off


def test_broken_kernel_is_blocked_with_repro_commands(runs, capsys):
    code, out, _ = gate(capsys, "--candidate", str(runs["broken"]), "--baseline", str(runs["base"]))
    assert code == REGRESSION
    assert "❌ blocked" in out and "Cells that passed in the baseline and fail now" in out
    before, after = _cell_statuses(runs["base"]), _cell_statuses(runs["broken"])
    assert f"| neg | float32 | {before['neg', 'float32']} | {after['neg', 'float32']} |" in out
    assert "| abs |" not in out  # only the broken operator's cells
    assert ('`pytest "conformance/test_conformance.py::test_case[neg::float32::contiguous]" '
            '--vendor interpreter --quick`') in out


def test_removed_case_is_blocked(runs, tmp_path, capsys):
    candidate = _copy(runs["same"], tmp_path / "cand")
    report = _report(candidate)
    removed, count = next(c["id"] for c in report["cases"] if c["op"] == "abs"), report["collected"]["abs"]

    def drop(report):
        report["cases"] = [c for c in report["cases"] if c["id"] != removed]
        report["collected"]["abs"] -= 1

    _edit_json(candidate, drop)
    code, out, _ = gate(capsys, "--candidate", str(candidate), "--baseline", str(runs["base"]))
    assert code == REGRESSION
    assert "Cases that vanished" in out
    dtype = removed.split("::")[1]
    n = cells(report)["abs", dtype].total()
    assert f"| abs | {count} | {count - 1} | {dtype}: {n - 1} case(s), {n} in the baseline |" in out


def test_narrower_dtype_run_is_blocked(runs, capsys):
    code, out, _ = gate(capsys, "--candidate", str(runs["narrow"]), "--baseline", str(runs["base"]))
    assert code == REGRESSION
    assert "Cases that vanished" in out
    rows = {line.split(" | ")[0]: line for line in out.splitlines() if line.startswith(("| abs | ", "| neg | "))}
    assert "every float16 case" in rows["| abs"] and "every int64 case" in rows["| neg"]
    assert "float32" not in rows["| abs"] and "int32" not in rows["| neg"]


def test_newly_passing_cells_are_reported_not_blocked(runs, capsys):
    code, out, _ = gate(capsys, "--candidate", str(runs["same"]), "--baseline", str(runs["broken"]))
    assert code == PASS, out
    before, after = _cell_statuses(runs["broken"]), _cell_statuses(runs["same"])
    fixed = [key for key in after if before[key] == "fail" and after[key] == "pass"]
    assert fixed, "neg's cells must pass in an unbroken run"
    assert "Newly passing cells" in out
    for op, dtype in fixed:
        assert f"| {op} | {dtype} | fail | pass |" in out
    assert "gems-gate promote --vendor interpreter --candidate " + str(runs["same"]) in out


def test_new_operator_is_reported_not_blocked(runs, tmp_path, capsys):
    baseline = _copy(runs["base"], tmp_path / "base")

    def forget_neg(report):
        report["cases"] = [c for c in report["cases"] if c["op"] != "neg"]
        del report["collected"]["neg"]

    _edit_json(baseline, forget_neg)
    code, out, _ = gate(capsys, "--candidate", str(runs["same"]), "--baseline", str(baseline))
    assert code == PASS, out
    assert "New operators" in out and f"| neg | {_report(runs['same'])['collected']['neg']} |" in out


def test_registered_operator_without_cases_is_blocked(runs, capsys):
    registered = {**REGISTERED, "newop": ["newop.default"]}
    code, out, _ = gate(capsys, "--candidate", str(runs["same"]), "--baseline", str(runs["base"]),
                        registered=registered)
    assert code == REGRESSION
    assert "Operators registered without conformance cases" in out and "| newop | newop.default |" in out


def test_real_registry_flags_every_registered_operator_the_run_lacks(runs, capsys):
    from gems.gate.registry import registered_operators

    table = registered_operators("interpreter")
    assert {"abs", "neg"} <= set(table) and "neg" in table["neg"]
    untested = sorted(set(table) - set(OPS))
    assert untested, "the library declares more operators than these runs cover"
    code, out, _ = gate(capsys, "--candidate", str(runs["same"]), "--baseline", str(runs["base"]), registered=table)
    assert code == REGRESSION
    assert f"**Blocking:** {len(untested)} operator(s) without cases." in out
    for op in untested[:MAX_ROWS]:  # a long table is cut, saying how many rows it left out
        assert f"| {op} | {', '.join(table[op])} |" in out
    assert len(untested) <= MAX_ROWS or f"… and {len(untested) - MAX_ROWS} more." in out


def test_cli_subprocess_blocks_and_writes_the_verdict(runs, tmp_path):
    """The console entry point end to end, with the real registry (which also lists operators these runs lack)."""
    verdict = tmp_path / "verdict.md"
    proc = subprocess.run([sys.executable, "-m", "gems.gate", "--vendor", "interpreter", "--candidate",
                           str(runs["broken"]), "--baseline", str(runs["base"]), "--out", str(verdict)],
                          cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == REGRESSION, proc.stderr
    assert verdict.read_text() == proc.stdout
    assert "Cells that passed in the baseline and fail now" in proc.stdout and "| neg | float32 | " in proc.stdout


# --- unusable input ------------------------------------------------------------------------------


def _truncate(path: Path) -> None:
    text = path.read_text()
    path.write_text(text[: len(text) // 2])


def _set(field, value):
    return lambda run: _edit_json(run, lambda r: r.update({field: value}))


def _drop_case_only(run):
    _edit_json(run, lambda r: r.update(cases=r["cases"][1:]))


BAD_CANDIDATES = {
    "missing": (lambda run: (run / "conformance.json").unlink(), "conformance.json: file not found"),
    "truncated": (lambda run: _truncate(run / "conformance.json"), "conformance.json: not valid JSON (truncated?)"),
    "empty": (lambda run: (run / "conformance.json").write_text(""), "conformance.json: not valid JSON"),
    "schema": (_set("schema", "gems.conformance/0"), "conformance.json: schema is 'gems.conformance/0'"),
    "no cases field": (lambda run: _edit_json(run, lambda r: r.pop("cases")), "missing field 'cases'"),
    "other vendor": (_set("vendor", "nvidia"), "results of vendor 'nvidia'"),
    "other device": (_set("device", "NVIDIA H200"), "conformance.json: device is 'NVIDIA H200'"),
    "other torch": (_set("torch", "2.11.0+cu130"), "mixed torch versions: torch 2.11.0+cu130 in"),
    "other triton": (_set("triton", "0.0.1"), "mixed triton versions: triton 0.0.1 in"),  # no real version
    "other mode": (_set("mode", "full"), "conformance.json: mode is 'full'"),
    "incomplete": (_drop_case_only, "incomplete run"),
    "unknown status": (lambda run: _edit_json(run, lambda r: r["cases"][0].update(status="meh")), "unknown status"),
}


@pytest.mark.parametrize("damage", BAD_CANDIDATES, ids=list(BAD_CANDIDATES))
def test_bad_candidate_is_unusable_never_a_pass(damage, runs, tmp_path, capsys):
    candidate = _copy(runs["same"], tmp_path / "cand")
    spoil, expected = BAD_CANDIDATES[damage]
    spoil(candidate)
    verdict = tmp_path / "verdict.md"
    code, out, err = gate(capsys, "--candidate", str(candidate), "--baseline", str(runs["base"]), "--out", str(verdict))
    assert code == UNUSABLE
    assert expected in err and expected in out
    assert str(candidate) in err
    assert "⚠️ unusable input" in verdict.read_text()


def test_missing_baseline_says_how_to_make_one(runs, tmp_path, capsys):
    code, _, err = gate(capsys, "--candidate", str(runs["same"]), "--baseline", str(tmp_path / "nothing"))
    assert code == UNUSABLE
    assert f"{tmp_path / 'nothing' / 'conformance_cells.json'}: baseline file not found (nor conformance.json" in err
    assert "gems-gate promote --vendor interpreter" in err


def test_unknown_vendor_is_unusable(runs, capsys):
    code = main(["--vendor", "nosuchvendor", "--candidate", str(runs["same"]), "--baseline", str(runs["base"])],
                registered=lambda vendor: REGISTERED)
    assert code == UNUSABLE
    assert "unknown vendor 'nosuchvendor'" in capsys.readouterr().err


def test_a_crash_in_the_gate_reads_neither_as_pass_nor_as_regression(runs, capsys):
    def registry_that_crashes(vendor):
        raise RuntimeError("boom")

    code = main(["--vendor", "interpreter", "--candidate", str(runs["same"]), "--baseline", str(runs["base"])],
                registered=registry_that_crashes)
    out, err = capsys.readouterr()
    assert code == UNUSABLE
    assert "gems-gate failed: RuntimeError: boom" in out and "Traceback" in err


def test_version_change_can_be_allowed_explicitly(runs, tmp_path, capsys):
    candidate = _copy(runs["same"], tmp_path / "cand")
    _set("torch", "2.14.0+cpu")(candidate)
    code, out, _ = gate(capsys, "--candidate", str(candidate), "--baseline", str(runs["base"]),
                        "--allow-version-change")
    assert code == PASS, out
    assert "Versions differ (allowed by --allow-version-change): torch 2.14.0+cpu" in out


# --- perf ----------------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def perf_rows(once_per_run) -> list[dict]:
    """Real gems-perf output (quick suite) for the operators of the conformance runs, obtained the way
    the gate re-measures suspects (python -m gems.perf --vendor V --ops ... --out TMP ...)."""
    measure = gems_perf_remeasurer("interpreter", ["--quick", "--no-progress"])
    rows = once_per_run("gate-perf-rows", lambda _: measure(list(OPS)))
    assert {r["op"] for r in rows} == set(OPS) and all(r["status"] == "ok" for r in rows), rows
    return rows


def _write_perf(run: Path, rows, columns=PERF_COLUMNS) -> None:
    with (run / "perf.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)


GEMS_TIMES = ("gems_ms", "gems_p20_ms", "gems_p80_ms", "gems_percall_us")


def _slower(rows, op: str, factor: float) -> list[dict]:
    """The rows with ``op`` running at ``factor`` of its speed (0.8: 20% slower), as gems-perf would record it."""
    changed = []
    for row in rows:
        row = dict(row)
        if row["op"] == op and row["status"] == "ok":
            for column in GEMS_TIMES:
                if row[column]:
                    row[column] = repr(float(row[column]) / factor)
            row["speedup"] = repr(float(row["speedup"]) * factor)
            if row["percall_ratio"]:
                row["percall_ratio"] = repr(float(row["percall_ratio"]) / factor)
        changed.append(row)
    return changed


def _op_speedup(rows, op: str) -> float:
    return geomean(row_speedup(r) for r in rows if r["op"] == op)


@pytest.fixture
def perf_runs(runs, perf_rows, tmp_path):
    """(baseline dir, candidate dir, perf rows): copies of the conformance runs with the real perf results."""
    baseline, candidate = _copy(runs["base"], tmp_path / "base"), _copy(runs["same"], tmp_path / "cand")
    rows = perf_rows
    _write_perf(baseline, rows)
    _write_perf(candidate, rows)
    return baseline, candidate, rows


def test_perf_unchanged_passes(perf_runs, capsys):
    baseline, candidate, _ = perf_runs
    code, out, _ = gate(capsys, "--candidate", str(candidate), "--baseline", str(baseline), "--perf", "on",
                        "--no-remeasure")
    assert code == PASS, out
    assert "Perf gated: threshold 5%" in out


def test_operator_20_percent_slower_is_blocked(perf_runs, capsys):
    baseline, candidate, rows = perf_runs
    _write_perf(candidate, _slower(rows, "abs", 0.8))
    code, out, _ = gate(capsys, "--candidate", str(candidate), "--baseline", str(baseline), "--perf", "on",
                        "--no-remeasure")
    assert code == REGRESSION
    before = _op_speedup(rows, "abs")
    rows_compared = sum(r["op"] == "abs" for r in rows)
    assert "Perf regressions (geometric-mean speedup down more than 5%)" in out
    assert (f"| abs | {rows_compared} | {before:.3g}x | {before * 0.8:.3g}x | -20.0% | not re-measured |") in out
    assert "| neg |" not in out


def test_slowdown_within_the_threshold_passes_and_threshold_is_configurable(perf_runs, capsys):
    baseline, candidate, rows = perf_runs
    _write_perf(candidate, _slower(rows, "abs", 0.96))
    assert gate(capsys, "--candidate", str(candidate), "--baseline", str(baseline), "--perf", "on",
                "--no-remeasure")[0] == PASS
    code, out, _ = gate(capsys, "--candidate", str(candidate), "--baseline", str(baseline), "--perf", "on",
                        "--no-remeasure", "--threshold", "3")
    assert code == REGRESSION and "-4.0%" in out


def test_remeasure_that_confirms_the_slowdown_blocks(perf_runs, capsys):
    baseline, candidate, rows = perf_runs
    _write_perf(candidate, _slower(rows, "abs", 0.8))
    asked = []

    def remeasure(ops):
        asked.append(ops)
        return [r for r in inputs.load_perf(candidate / "perf.csv") if r["op"] in ops]

    def remeasurer(vendor, perf_args):
        asked.append((vendor, perf_args))
        return remeasure

    code = main(["--vendor", "interpreter", "--candidate", str(candidate), "--baseline", str(baseline), "--perf", "on",
                 "--remeasure", "--perf-args=--quick"], registered=lambda vendor: REGISTERED, remeasurer=remeasurer)
    out = capsys.readouterr().out
    assert asked == [("interpreter", ["--quick"]), ["abs"]]  # the run's suite; only the suspect operator
    assert code == REGRESSION
    assert "-20.0%" in out and "not re-measured" not in out


def test_remeasure_that_clears_the_slowdown_passes(perf_runs, capsys):
    baseline, candidate, rows = perf_runs
    _write_perf(candidate, _slower(rows, "abs", 0.8))
    code, out, _ = gate(capsys, "--candidate", str(candidate), "--baseline", str(baseline), "--perf", "on",
                        "--remeasure", remeasure=lambda ops: inputs.load_perf(baseline / "perf.csv"))
    assert code == PASS, out
    assert "Slowdowns not reproduced when re-measured" in out and "| abs |" in out


def test_remeasure_that_fails_keeps_the_block(perf_runs, capsys):
    baseline, candidate, rows = perf_runs
    _write_perf(candidate, _slower(rows, "abs", 0.8))

    def remeasure(ops):
        raise RuntimeError("device lost")

    code, out, _ = gate(capsys, "--candidate", str(candidate), "--baseline", str(baseline), "--perf", "on",
                        "--remeasure", remeasure=remeasure)
    assert code == REGRESSION
    assert "Re-measuring abs failed, so the first measurement stands: device lost" in out


def test_interpreter_gate_yaml_leaves_perf_ungated(perf_runs, capsys):
    baseline, candidate, rows = perf_runs
    _write_perf(candidate, _slower(rows, "abs", 0.8))
    code, out, _ = gate(capsys, "--candidate", str(candidate), "--baseline", str(baseline))
    assert code == PASS, out
    assert "Perf not gated for interpreter (perf_gating off: " in out and "_interpreter/gate.yaml)" in out


def test_faster_operator_is_reported_with_the_promote_command(perf_runs, capsys):
    baseline, candidate, rows = perf_runs
    _write_perf(candidate, _slower(rows, "neg", 1.25))
    code, out, _ = gate(capsys, "--candidate", str(candidate), "--baseline", str(baseline), "--perf", "on",
                        "--no-remeasure")
    assert code == PASS, out
    assert "Faster operators" in out and "+25.0%" in out
    assert f"gems-gate promote --vendor interpreter --candidate {candidate}" in out


def test_perf_row_that_turns_wrong_is_blocked(perf_runs, capsys):
    baseline, candidate, rows = perf_runs
    rows = [dict(r) for r in rows]
    rows[0].update(status="mismatch", reason="12 values differ from ATen's", speedup="")
    _write_perf(candidate, rows)
    code, out, _ = gate(capsys, "--candidate", str(candidate), "--baseline", str(baseline), "--perf", "on",
                        "--no-remeasure")
    assert code == REGRESSION
    assert "Perf rows that ran correctly in the baseline and do not now" in out
    assert f"| {rows[0]['op']} | {rows[0]['dtype']} | {rows[0]['shape']} | mismatch | 12 values differ" in out


def test_vanished_perf_rows_are_blocked(perf_runs, capsys):
    baseline, candidate, rows = perf_runs
    _write_perf(candidate, rows[1:])
    code, out, _ = gate(capsys, "--candidate", str(candidate), "--baseline", str(baseline), "--perf", "on",
                        "--no-remeasure")
    assert code == REGRESSION and "Perf rows that vanished" in out


def _perf_damage(rows):
    def truncate(run):
        _write_perf(run, rows)
        text = (run / "perf.csv").read_text()
        (run / "perf.csv").write_text(text[: text.rindex("\n", 0, len(text) - 1) + 40])

    def drop_column(run):
        _write_perf(run, rows, [c for c in PERF_COLUMNS if c != "speedup"])

    def other_torch(run):
        _write_perf(run, [{**r, "torch": "2.11.0+cu130"} for r in rows])

    def mixed_rows(run):
        _write_perf(run, [{**r, "triton": "0.0.1"} if i == 2 else r for i, r in enumerate(rows)])

    def bad_speedup(run):
        bad = {"speedup": "nan", "aten_percall_us": "", "gems_percall_us": ""}
        _write_perf(run, [{**r, **bad} if i == 1 else r for i, r in enumerate(rows)])

    def other_timer(run):
        _write_perf(run, [{**r, "timer": "cuda_event"} for r in rows])

    return {
        "missing": (lambda run: (run / "perf.csv").unlink(), "perf.csv: file not found, but perf is gated"),
        "truncated": (truncate, f"field(s), expected {len(PERF_COLUMNS)} (truncated or malformed row)"),
        "empty": (lambda run: (run / "perf.csv").write_text(""), "perf.csv: empty file"),
        "missing column": (drop_column, "perf.csv: missing column(s) ['speedup']"),
        "other torch": (other_torch, "perf.csv: torch is '2.11.0+cu130' but"),
        "mixed rows": (mixed_rows, "perf.csv: rows disagree on triton"),
        "bad speedup": (bad_speedup, "perf.csv: line 3: status ok but no usable speedup (speedup 'nan'"),
        "other timer": (other_timer, "perf.csv: timer is 'cuda_event' but the baseline"),
    }


@pytest.mark.parametrize("damage", list(_perf_damage([])), ids=list(_perf_damage([])))
def test_bad_perf_file_is_unusable(damage, perf_runs, capsys):
    baseline, candidate, rows = perf_runs
    spoil, expected = _perf_damage(rows)[damage]
    spoil(candidate)
    code, out, err = gate(capsys, "--candidate", str(candidate), "--baseline", str(baseline), "--perf", "on",
                          "--no-remeasure")
    assert code == UNUSABLE
    assert expected in err and str(candidate / "perf.csv") in err


# --- promote -------------------------------------------------------------------------------------


def _promote(capsys, *argv):
    code = main(["promote", "--vendor", "interpreter", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_promote_then_gate_against_the_promoted_baseline(runs, tmp_path, capsys):
    reports = tmp_path / "reports"
    code, out, _ = _promote(capsys, "--candidate", str(runs["base"]), "--reports", str(reports))
    assert code == PASS, out
    target = reports / "interpreter"
    # The baseline is the run's compact form, made by the code the gate reads it with; the case-level
    # records stay with the run.
    assert (target / "conformance_cells.json").read_text() == compact_text(_report(runs["base"]))
    assert not (target / "conformance.json").exists()
    assert (target / "support_matrix.md").is_file() and (target / "support_matrix.csv").is_file()
    assert oct(target.stat().st_mode & 0o777) == "0o755"
    log = (target / LOG).read_text().splitlines()
    assert len([line for line in log if line.startswith("| 20")]) == 1
    assert gate(capsys, "--candidate", str(runs["same"]), "--baseline", str(target))[0] == PASS
    assert not [p.name for p in reports.iterdir() if p.name != "interpreter"]  # no staging left behind


def test_promote_refuses_failures_unless_forced_with_a_reason(runs, tmp_path, capsys):
    reports = tmp_path / "reports"
    assert _promote(capsys, "--candidate", str(runs["base"]), "--reports", str(reports))[0] == PASS
    before = (reports / "interpreter" / "conformance_cells.json").read_text()

    code, _, err = _promote(capsys, "--candidate", str(runs["broken"]), "--reports", str(reports))
    assert code == REGRESSION and "refused" in err and "neg::" in err and "--force --reason" in err
    code, _, err = _promote(capsys, "--candidate", str(runs["broken"]), "--reports", str(reports), "--force")
    assert code == UNUSABLE and "--force needs --reason" in err
    assert (reports / "interpreter" / "conformance_cells.json").read_text() == before

    code, out, _ = _promote(capsys, "--candidate", str(runs["broken"]), "--reports", str(reports), "--force",
                            "--reason", "neg rewrite lands next week; tracked in issue 42")
    assert code == PASS, out
    log = (reports / "interpreter" / LOG).read_text()
    assert "forced with" in log and "neg rewrite lands next week; tracked in issue 42" in log
    assert len([line for line in log.splitlines() if line.startswith("| 20")]) == 2
    # Failures the baseline already has do not block; the verdict counts them.
    code, out, _ = gate(capsys, "--candidate", str(runs["broken"]), "--baseline", str(reports / "interpreter"))
    assert code == PASS, out
    assert "case(s) fail in both runs" in out


def test_promote_copies_perf_results_and_drops_stale_ones(runs, perf_rows, tmp_path, capsys):
    candidate, reports = _copy(runs["base"], tmp_path / "cand"), tmp_path / "reports"
    _write_perf(candidate, perf_rows)
    (candidate / "perf_summary.md").write_text("# perf\n")
    (candidate / "speedup_by_op.png").write_bytes(b"\x89PNG")
    assert _promote(capsys, "--candidate", str(candidate), "--reports", str(reports))[0] == PASS
    target = reports / "interpreter"
    assert (target / "perf.csv").read_text() == (candidate / "perf.csv").read_text()
    assert (target / "speedup_by_op.png").read_bytes() == b"\x89PNG"

    upgraded = _copy(runs["same"], tmp_path / "upgraded")
    _set("torch", "2.14.0+cpu")(upgraded)
    code, out, _ = _promote(capsys, "--candidate", str(upgraded), "--reports", str(reports))
    assert code == PASS and "dropped the old perf results" in out
    assert not (target / "perf.csv").exists() and not (target / "speedup_by_op.png").exists()
    assert len([line for line in (target / LOG).read_text().splitlines() if line.startswith("| 20")]) == 2


def test_promote_copies_model_results_and_keeps_them_when_a_later_run_has_none(runs, tmp_path, capsys):
    candidate, reports = _copy(runs["base"], tmp_path / "cand"), tmp_path / "reports"
    for name in ("models.json", "models.md", "models.csv"):
        (candidate / name).write_text(f"{name} of the candidate\n")
    assert _promote(capsys, "--candidate", str(candidate), "--reports", str(reports))[0] == PASS
    target = reports / "interpreter"
    assert (target / "models.md").read_text() == "models.md of the candidate\n"
    assert _promote(capsys, "--candidate", str(runs["same"]), "--reports", str(reports))[0] == PASS
    assert (target / "models.json").read_text() == "models.json of the candidate\n"


def test_promote_records_each_cells_seconds_and_keeps_them_for_a_run_without_times(runs, tmp_path, capsys):
    reports = tmp_path / "reports"
    assert _promote(capsys, "--candidate", str(runs["base"]), "--reports", str(reports))[0] == PASS
    written = durations.load(reports / "interpreter" / durations.FILE)
    expected = durations.cell_seconds(_report(runs["base"]))
    assert written.keys() == expected.keys() == {f"{c['op']}::{c['dtype']}" for c in _report(runs["base"])["cases"]}
    assert all(written[k] == pytest.approx(expected[k], abs=0.006) for k in expected)
    compact_only = tmp_path / "compact"
    compact_only.mkdir()
    (compact_only / "conformance_cells.json").write_text(compact_text(_report(runs["same"])))
    assert _promote(capsys, "--candidate", str(compact_only), "--reports", str(reports))[0] == PASS
    assert durations.load(reports / "interpreter" / durations.FILE) == written


def test_promote_rejects_unreadable_candidate_and_keeps_the_baseline(runs, tmp_path, capsys):
    reports = tmp_path / "reports"
    assert _promote(capsys, "--candidate", str(runs["base"]), "--reports", str(reports))[0] == PASS
    candidate = _copy(runs["same"], tmp_path / "cand")
    _truncate(candidate / "conformance.json")
    code, _, err = _promote(capsys, "--candidate", str(candidate), "--reports", str(reports))
    assert code == UNUSABLE and "not valid JSON" in err
    assert (reports / "interpreter" / "conformance_cells.json").read_text() == compact_text(_report(runs["base"]))


def test_a_compact_baseline_judges_like_the_case_level_one(runs, tmp_path, capsys):
    """The gate reads a compact baseline (and a compact candidate) and gives the verdicts the case-level
    files give: a pass, the broken kernel's cells with their failing cases, a vanished dtype."""
    compact = {}
    for name in ("base", "broken", "same"):
        compact[name] = tmp_path / name
        compact[name].mkdir()
        (compact[name] / "conformance_cells.json").write_text(compact_text(_report(runs[name])))
    assert gate(capsys, "--candidate", str(runs["same"]), "--baseline", str(compact["base"]))[0] == PASS
    assert gate(capsys, "--candidate", str(compact["same"]), "--baseline", str(compact["base"]))[0] == PASS
    full = gate(capsys, "--candidate", str(runs["broken"]), "--baseline", str(runs["base"]))
    for candidate in (runs["broken"], compact["broken"]):
        code, out, _ = gate(capsys, "--candidate", str(candidate), "--baseline", str(compact["base"]))
        assert code == REGRESSION
        def tables(text):  # past the lines naming the files, up to the summary
            return text.split("### Summary")[0].split("- Baseline")[1].split("\n", 1)[1]

        assert "Cells that passed in the baseline and fail now" in out and tables(out) == tables(full[1])
    code, out, _ = gate(capsys, "--candidate", str(runs["narrow"]), "--baseline", str(compact["base"]))
    assert code == REGRESSION and "every float16 case" in out


def test_the_compact_form_is_sorted_one_line_per_cell_and_case(runs):
    report = _report(runs["broken"])
    text = compact_text(report)
    lines = text.splitlines()
    cell_lines = [line for line in lines if line.startswith('  "abs::') or line.startswith('  "neg::')]
    assert cell_lines == sorted(cell_lines) and len(cell_lines) == len(cells(report))
    failing = [c for c in report["cases"] if c["status"] != "pass"]
    case_lines = [line for line in lines if line.startswith('  {"id": ')]
    assert [json.loads(line.rstrip(","))["id"] for line in case_lines] == sorted(c["id"] for c in failing)
    assert json.loads(text)["schema"] == "gems.conformance-cells/1"
    passing = _report(runs["base"])
    assert len(compact_text(passing)) < len(json.dumps(passing)) / 10  # the case-level file stays in runs/


def test_a_compact_file_whose_counts_disagree_is_unusable(runs, tmp_path, capsys):
    baseline = tmp_path / "base"
    baseline.mkdir()
    report = json.loads(compact_text(_report(runs["broken"])))
    report["cases"] = report["cases"][1:]  # a listed failure removed by hand; its cell still counts it
    (baseline / "conformance_cells.json").write_text(json.dumps(report))
    code, _, err = gate(capsys, "--candidate", str(runs["same"]), "--baseline", str(baseline))
    assert code == UNUSABLE and "conformance_cells.json: cell neg::" in err and "but the file lists" in err


def test_the_summary_is_recomputed_not_echoed(runs, tmp_path, capsys):
    candidate = _copy(runs["same"], tmp_path / "cand")
    _edit_json(candidate, lambda r: r["summary"].update({"pass": 999999, "fail": 7}))
    code, out, _ = gate(capsys, "--candidate", str(candidate), "--baseline", str(runs["base"]))
    passed = sum(c["status"] == "pass" for c in _report(runs["same"])["cases"])
    assert code == PASS and "- Conformance now: cells passed: " in out
    assert f"cases: {passed} pass, 0 fail" in out.split("- Conformance now: ")[1].splitlines()[0]
    assert "999999" not in out


# --- configuration and workflows -----------------------------------------------------------------


def test_vendor_gate_settings():
    interpreter, nvidia = config.load("interpreter"), config.load("nvidia")
    assert not interpreter.perf_gating and not interpreter.remeasure
    assert nvidia.perf_gating and nvidia.perf_threshold_pct == 5.0 and nvidia.remeasure


@pytest.mark.parametrize("text, expected", [
    ("perf_gating: maybe\n", "perf_gating must be one of"),
    ("perf_threshold_pct: 150\n", "perf_threshold_pct must be a number between 0 and 100"),
    ("perf_treshold_pct: 5\n", "unknown setting(s) ['perf_treshold_pct']"),
    ("perf_gating: [on\n", "not valid YAML"),
])
def test_malformed_gate_yaml_names_the_file(text, expected, tmp_path):
    path = tmp_path / "gate.yaml"
    path.write_text(text)
    with pytest.raises(GateInputError, match=r"gate\.yaml: ") as err:
        config._read(path)
    assert expected in str(err.value)


def test_vendor_workflow_template_renders_for_a_new_vendor():
    template = (REPO / "vendor_template" / "ci" / "workflow.yml.tmpl").read_text()
    text = template.replace("{{vendor}}", "acme")  # the scaffold's placeholder syntax; GitHub's is ${{ ... }}
    assert "{{" not in text.replace("${{", "")
    workflow = yaml.safe_load(text)
    trigger = workflow.get("on", workflow.get(True))  # YAML 1.1 reads the key `on` as true
    assert "gems/runtime/backend/_acme/**" in trigger["pull_request"]["paths"]
    assert workflow["env"]["VENDOR"] == "acme"
    job = workflow["jobs"]["gate"]
    assert job["runs-on"] == ["self-hosted", "gems-acme"]
    commands = "\n".join(step.get("run", "") for step in job["steps"])
    for command in ("python -m pytest conformance --vendor \"$VENDOR\"", "python -m gems.perf --vendor \"$VENDOR\"",
                    "python -m gems.gate --vendor \"$VENDOR\""):
        assert command in commands
    assert commands.index("pytest conformance") < commands.index("gems.perf") < commands.index("gems.gate")


def test_interpreter_workflow_runs_the_ci_script_on_a_hosted_runner():
    workflow = yaml.safe_load((REPO / "ci" / "workflows" / "interpreter.yml").read_text())
    (job,) = workflow["jobs"].values()
    assert job["runs-on"] == "ubuntu-latest"
    assert any(step.get("run", "").strip() == "bash .ci/run" for step in job["steps"])


# --- merge -------------------------------------------------------------------------------------


def _shard(run: Path, where: Path, op: str) -> Path:
    """The part of ``run`` that covers one operator, as an --ops shard would have written it."""
    shard = _copy(run, where)

    def keep_only(report):
        report["cases"] = [c for c in report["cases"] if c["op"] == op]
        report["collected"] = {k: v for k, v in report["collected"].items() if k == op}

    _edit_json(shard, keep_only)
    return shard


def test_merge_joins_shards_into_the_run_they_split_and_the_gate_judges_it(runs, tmp_path, capsys):
    shards = [_shard(runs["base"], tmp_path / op, op) for op in OPS]
    assert main(["merge", "--out", str(tmp_path / "merged"), *map(str, shards)]) == PASS
    assert "merged 2 shards: 2 operators" in capsys.readouterr().out
    merged, base = _report(tmp_path / "merged"), _report(runs["base"])
    assert _statuses(tmp_path / "merged") == _statuses(runs["base"])
    assert merged["collected"] == base["collected"] and merged["summary"] == base["summary"]
    assert any("Merged from 2 shards" in note for note in merged["notes"])
    code, out, _ = gate(capsys, "--candidate", str(tmp_path / "merged"), "--baseline", str(runs["base"]),
                        "--perf", "off")
    assert code == PASS, out


def test_merge_refuses_shards_that_are_not_one_run(runs, tmp_path, capsys):
    abs_shard, neg_shard = (_shard(runs["base"], tmp_path / op, op) for op in OPS)
    assert main(["merge", "--out", str(tmp_path / "m1"), str(abs_shard), str(abs_shard)]) == UNUSABLE
    assert "operator 'abs' is in two shards" in capsys.readouterr().err
    _edit_json(neg_shard, lambda report: report.update(torch="9.9.9"))
    assert main(["merge", "--out", str(tmp_path / "m2"), str(abs_shard), str(neg_shard)]) == UNUSABLE
    assert "shards differ in 'torch'" in capsys.readouterr().err
    assert not (tmp_path / "m2" / "conformance.json").exists()
