"""gems-perf: the quick suite end to end on the interpreter vendor, and the runner's handling of bad cases.

The end-to-end run is one subprocess (``python -m gems.perf --quick``); its outputs are checked by
content, never by timing. The other tests drive the runner in-process with small fake operators.
"""

import csv
import importlib.metadata
import json
import math
import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
import triton
import triton.language as tl

import gems
import gems.ops  # noqa: F401  (gems.ops.all_specs below; the vendor is chosen by GEMS_VENDOR)
from gems.perf import __main__ as cli
from gems.perf import parallel, runner, shapes, timing
from gems.perf import run as perf_run
from gems.perf.report import summary_markdown
from gems.perf.results import aggregates, row_speedup
from gems.report import conformance_report, environment
from gems.runtime import registration, selection
from gems.runtime.vendor import Autograd, Capabilities
from gems.spec import OpSpec, PerfSpec, Sample

# The quick run is built once per pytest run, whichever xdist worker asks first (conftest's once_per_run).
pytestmark = pytest.mark.xdist_group("perf")


# The contract with the CI gate: exactly these columns, in this order.
EXPECTED_COLUMNS = [
    "vendor", "device", "driver", "torch", "triton", "date", "timer", "flush", "op", "family", "dtype", "shape",
    "size_class", "status", "reason", "aten_ms", "gems_ms", "aten_p20_ms", "aten_p80_ms", "gems_p20_ms",
    "gems_p80_ms", "speedup", "gbps", "tflops", "pct_copy_bw", "aten_percall_us", "gems_percall_us",
    "percall_ratio", "first_call_ms", "suite", "commit", "native_pct",
]
STATUSES = {"ok", "mismatch", "fallback", "unsupported", "no-perf", "oom", "error"}
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
REPO = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------- the quick suite, end to end

def _quick_perf_run(out: Path) -> dict:
    # A conformance result in the same folder: the support matrix must join it.
    interpreter = selection.load_backend("interpreter")  # loaded, not activated: only its description
    case = {"id": "add::float32::contiguous", "op": "add", "dtype": "float32", "variant": "contiguous",
            "status": "pass", "message": ""}
    report = conformance_report.build(environment.environment(interpreter), "quick", {"add": 1}, [case])
    (out / "conformance.json").write_text(json.dumps(report))
    env = {**os.environ, "GEMS_VENDOR": "interpreter"}
    # One dtype: every operator's perf inputs through the whole pipeline at half the cases (CI time); the main
    # job (README's first command) runs the quick suite's two.
    proc = subprocess.run([sys.executable, "-m", "gems.perf", "--quick", "--dtypes", "float32", "--out", str(out)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
    return {"out": str(out), "returncode": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr}


@pytest.fixture(scope="session")
def quick_run(once_per_run):
    run = once_per_run("perf-quick-run", _quick_perf_run)
    out = Path(run.pop("out"))
    proc = SimpleNamespace(**run)
    with open(out / "perf.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
        handle.seek(0)
        header = next(csv.reader(handle))
    return SimpleNamespace(out=out, proc=proc, rows=rows, header=header)


def test_quick_run_succeeds_and_writes_every_output(quick_run):
    assert quick_run.proc.returncode == 0, quick_run.proc.stderr[-3000:]
    for name in ("perf.csv", "perf_summary.md", "speedup_by_op.png", "bandwidth.png", "support_matrix.md",
                 "support_matrix.html"):
        assert (quick_run.out / name).is_file(), name
        assert f"wrote {quick_run.out / name}" in quick_run.proc.stdout
    assert re.search(r"\[[#.]+\] \d+/\d+", quick_run.proc.stderr), "no progress bar on stderr"
    # The vendor and why it was chosen come first, before any case is timed.
    first = quick_run.proc.stderr.lstrip().splitlines()[0]
    assert first.startswith("gems-perf: vendor interpreter (the GEMS_VENDOR environment variable)"), first


def test_csv_has_the_fixed_columns_and_sane_rows(quick_run):
    assert quick_run.header == EXPECTED_COLUMNS
    rows = quick_run.rows
    declared = {s.name for s in gems.ops.all_specs() if s.perf is not None}
    assert {r["op"] for r in rows} >= declared
    for row in rows:
        assert row["status"] in STATUSES
        assert row["vendor"] == "interpreter" and row["timer"] == "wall-clock" and row["flush"] == "none"
        assert row["torch"] == torch.__version__ and row["date"]
        if row["status"] != "ok":
            assert row["reason"] and row["speedup"] == ""
            continue
        bandwidth = ("gbps", "pct_copy_bw")
        if row["reason"].startswith("bandwidth not reported"):  # above the copy ceiling: flagged, not reported
            assert row["gbps"] == row["pct_copy_bw"] == "", row
            bandwidth = ()
        for column in ("aten_ms", "gems_ms", "aten_p20_ms", "aten_p80_ms", "gems_p20_ms", "gems_p80_ms", "speedup",
                       "first_call_ms", *bandwidth):
            assert float(row[column]) > 0, (row["op"], column)
        assert float(row["gems_p20_ms"]) <= float(row["gems_ms"]) <= float(row["gems_p80_ms"])
        assert math.isclose(float(row["speedup"]), float(row["aten_ms"]) / float(row["gems_ms"]), rel_tol=1e-4)
        if row["size_class"] == "small":
            ratio = float(row["gems_percall_us"]) / float(row["aten_percall_us"])
            assert math.isclose(float(row["percall_ratio"]), ratio, rel_tol=1e-4)
        else:
            assert row["size_class"] == "large" and row["percall_ratio"] == ""
    assert {r["size_class"] for r in rows if r["status"] == "ok"} == {"small", "large"}
    # The share of timed gems calls the native layer replayed: a warm pointwise call always; scatter_add never
    # under the interpreter (its indices are checked on the host, which a replay would skip).
    replayed = {(r["op"], r["shape"]): float(r["native_pct"]) for r in rows if r["status"] == "ok"}
    assert all(0.0 <= pct <= 100.0 for pct in replayed.values())
    assert {pct for (op, _), pct in replayed.items() if op == "add"} == {100.0}
    assert {pct for (op, _), pct in replayed.items() if op == "scatter_add"} == {0.0}
    summary = (quick_run.out / "perf_summary.md").read_text()
    assert "## Native replay" in summary and "| scatter_add | float32 |" in summary


def test_summary_geomean_matches_the_csv(quick_run):
    speedups = []
    for row in quick_run.rows:
        if row["status"] != "ok":
            continue
        if row["size_class"] == "small":  # per-call time decides small shapes
            speedups.append(float(row["aten_percall_us"]) / float(row["gems_percall_us"]))
        else:
            speedups.append(float(row["speedup"]))
    expected = math.exp(sum(math.log(s) for s in speedups) / len(speedups))
    summary = (quick_run.out / "perf_summary.md").read_text()
    found = re.search(r"Overall geometric-mean speedup: \*\*([0-9.e+-]+)x\*\* over (\d+) cases", summary)
    assert found, summary[:2000]
    assert math.isclose(float(found.group(1)), expected, rel_tol=1e-3)
    assert int(found.group(2)) == len(speedups)
    for section in ("## Speedup by family", "## Speedup by dtype", "## Speedup by operator",
                    "## Operators slower than ATen", "## Cases by status"):
        assert section in summary


def test_charts_are_valid_pngs(quick_run):
    from matplotlib import image

    for name in ("speedup_by_op.png", "bandwidth.png"):
        data = (quick_run.out / name).read_bytes()
        assert data.startswith(PNG_SIGNATURE), name
        pixels = image.imread(quick_run.out / name)
        assert pixels.ndim == 3 and pixels.shape[0] > 100 and pixels.shape[1] > 100


def test_support_matrix_joins_conformance_and_speedup(quick_run):
    markdown = (quick_run.out / "support_matrix.md").read_text()
    add_row = next(line for line in markdown.splitlines() if line.startswith("| add |"))
    assert "✅ 1/1" in add_row and re.search(r"✅ 1/1 [0-9.e+-]+x", add_row), add_row
    page = (quick_run.out / "support_matrix.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "<table>" in page and "✅ 1/1" in page
    assert not re.search(r"(src|href)=", page), "the HTML page must be self-contained"


def test_conformance_after_perf_keeps_every_joined_output_current(quick_run, tmp_path):
    """Conformance rewrites the joined matrix (md and html) from conformance.json and perf.csv; each
    joined output names both runs (kind, date, commit)."""
    import shutil

    from gems.perf import matrix

    out = tmp_path / "run"
    shutil.copytree(quick_run.out, out)
    report = json.loads((out / "conformance.json").read_text())
    report["date"], report["commit"] = "2030-01-01T00:00:00Z", "abc1234567"
    (out / "conformance.json").write_text(json.dumps(report))
    conformance_report.write(out, report)  # what pytest conformance writes: the matrix without perf
    written = matrix.refresh(out)  # ... and then, as conftest does, the joined outputs again
    assert {p.name for p in written} == {"support_matrix.md", "support_matrix.html"}
    markdown, page = (out / "support_matrix.md").read_text(), (out / "support_matrix.html").read_text()
    perf_date = quick_run.rows[0]["date"]
    for text in (markdown, page):
        assert "2030-01-01T00:00:00Z, commit abc1234567" in text
        assert f"quick suite, {perf_date}, commit" in text
    add_row = next(line for line in markdown.splitlines() if line.startswith("| add |"))
    assert re.search(r"✅ 1/1 [0-9.e+-]+x", add_row), add_row
    assert matrix.refresh(tmp_path) == []  # no perf.csv: nothing to join


def _perf_row(op, size, speedup, pct=None, tflops=None, family="pointwise"):
    return {"op": op, "family": family, "dtype": "float32", "shape": "64", "size_class": size, "status": "ok",
            "reason": "", "speedup": speedup if size == "large" else None, "aten_ms": 1.0, "gems_ms": 1.0 / speedup,
            "aten_percall_us": speedup * 10 if size == "small" else None,
            "gems_percall_us": 10.0 if size == "small" else None, "pct_copy_bw": pct, "tflops": tflops}


def _fake_run(rows, copy_gbps=1000.0):
    env = {"vendor": "fake", "device": "fake device", "date": "2030-01-01T00:00:00Z"}
    return runner.PerfRun(env=env, suite="core", rows=rows, copy_gbps=copy_gbps, plan=None)


def test_speedup_chart_keeps_kernel_and_per_call_speedups_apart():
    from gems.perf import charts

    run = _fake_run([_perf_row("add", "large", 1.0), _perf_row("add", "small", 0.5), _perf_row("exp", "small", 2.0)])
    assert charts.per_op_speedups(run.rows) == {"large": {"add": 1.0}, "small": {"add": 0.5, "exp": 2.0}}
    assert charts.speedup_chart(run).startswith(PNG_SIGNATURE)


def test_bandwidth_chart_leaves_out_operators_that_move_no_data_or_compute():
    from gems.perf import charts

    rows = [_perf_row("add", "large", 1.0, pct=95.0), _perf_row("resolve_conj", "large", 40.0, pct=None),
            _perf_row("mm", "large", 1.0, pct=30.0, tflops=500.0), _perf_row("exp", "small", 1.0, pct=20.0)]
    assert set(charts.bandwidth_rows(_fake_run(rows))) == {"add"}
    assert charts.bandwidth_chart(_fake_run(rows, copy_gbps=None)).startswith(PNG_SIGNATURE)


def _chart_texts(figure) -> list[str]:
    return [t.get_text() for t in figure.findobj(lambda a: hasattr(a, "get_text")) if t.get_text()]


def test_interpreter_charts_say_what_was_timed_and_that_it_means_nothing():
    from gems.perf import charts

    families = [f"family{i:02d}" for i in range(14)]
    rows = [_perf_row(f"op{i}", size, 0.01 * (i + 1), pct=0.5 + i, family=families[i])
            for i in range(14) for size in ("large", "small")]
    run = _fake_run(rows, copy_gbps=27.0)
    run.env.update(vendor="interpreter", timer="wall-clock")
    figure = charts.speedup_figure(run)
    texts = " ".join(_chart_texts(figure))
    assert charts.CAVEAT in " ".join(figure.get_suptitle().split()) and "kernel time" not in texts
    assert "large shapes: wall-clock time per call" in texts
    panels = [ax for ax in figure.axes if ax.get_title()]
    assert len(panels) == 2 and all(ax.get_legend() is None for ax in panels)  # the legend covers no bar
    (legend,) = [ax.get_legend() for ax in figure.axes if ax.get_legend() is not None]
    assert sorted(t.get_text() for t in legend.get_texts()) == families
    assert len(set(charts.family_styles(families).values())) == 14  # no two families alike
    # 0.005x .. 0.15x on 5.5 inches: 1-2-5 labels would touch; what is left fits
    ticks = [t.get_text() for t in panels[0].get_xticklabels()]
    assert ticks and len(ticks) <= charts.PANEL_WIDTH / 0.55 and "1x" in ticks and "e-" not in "".join(ticks)


def test_ratio_ticks_thin_out_as_the_range_grows():
    from gems.perf import charts

    assert charts.ratio_ticks(0.3, 3) == [0.5, 1.0, 2.0]
    assert charts.ratio_ticks(0.00003, 1.5) == [0.0001, 0.001, 0.01, 0.1, 1.0]
    assert charts.ratio_label(0.0001) == "0.0001x" and charts.ratio_label(20) == "20x"


def test_bandwidth_chart_shows_bars_a_hundredth_of_others_on_a_log_axis():
    from gems.perf import charts

    rows = [dict(_perf_row("add", "large", 0.01, pct=0.5), gems_ms=100.0, aten_ms=1.0),
            dict(_perf_row("exp", "large", 0.01, pct=0.2), gems_ms=100.0, aten_ms=2.0)]
    figure = charts.bandwidth_figure(_fake_run(rows, copy_gbps=27.0))
    (ax,) = [ax for ax in figure.axes if ax.containers]  # the one with bars
    assert ax.get_xscale() == "log" and [t.get_text() for t in ax.get_yticklabels()] == ["exp", "add"]
    assert {"0.5%", "0.2%"} <= {t.get_text().strip() for t in ax.texts}  # each gems bar says its share
    linear = charts.bandwidth_figure(_fake_run([_perf_row("add", "large", 1.0, pct=80.0)]))
    assert [ax.get_xscale() for ax in linear.axes if ax.containers] == ["linear"]


def test_matrix_cells_and_legends_say_what_they_count(tmp_path):
    from collections import Counter

    from gems.perf import matrix

    assert conformance_report.cell_text(Counter({"pass": 16, "unsupported": 1})) == "✅ 16/17 (1 unsupported)"
    legend = conformance_report.legend_markdown()
    assert "✅ no failure: every case that ran passed" in legend and "all cases pass" not in legend
    assert "no reference on its device (ATen has no kernel there)" in legend and "dtype unsupported" not in legend
    rows = [{"op": "add", "dtype": "float32", "shape": "64", "status": "no-perf", "reason": "no perf inputs"},
            {"op": "exp", "dtype": "float32", "shape": "64", "status": "error", "reason": "boom"},
            {"op": "exp", "dtype": "float32", "shape": "128", "status": "error", "reason": "boom"}]
    perf = matrix.perf_cells(rows)
    assert perf["add", "float32"][0] == "(not benchmarked)" and perf["exp", "float32"][0] == "(perf: error ×2)"
    cases = [{"id": f"add::float32::v{i}", "op": "add", "dtype": "float32", "variant": f"v{i}", "status": "pass",
              "message": ""} for i in range(16)]
    cases.append({"id": "add::float32::grad", "op": "add", "dtype": "float32", "variant": "grad",
                  "status": "unsupported", "message": "not run on fake: ATen has no fake kernel for add"})
    env = {"vendor": "fake", "device": "fake device", "driver": None, "torch": "2", "triton": "3",
           "date": "2030-01-01T00:00:00Z", "commit": "abc"}
    report = conformance_report.build(env, "quick", {"add": 17}, cases, notes=["the fake device rounds down"])
    report["summary"]["pass"] = 999  # never echoed: the summary line counts the cases
    run = SimpleNamespace(env=env, suite="quick", rows=rows)
    page = matrix.html_page(run, report, "note", perf)
    assert "✅ 16/17 (1 unsupported)" in page and "not benchmarked" in page and "perf no-perf" not in page
    assert "<h2>Vendor notes</h2>" in page and "the fake device rounds down" in page
    assert "Cases that did not simply pass (1)" in page and "ATen has no fake kernel for add" in page
    assert "cases: 16 pass, 0 fail" in page and "999" not in page
    import html

    from gems.perf.charts import CAVEAT

    assert html.escape(CAVEAT) not in page
    interpreted = SimpleNamespace(env={**env, "vendor": "acme", "timer": "wall-clock"}, suite="quick", rows=rows)
    assert html.escape(CAVEAT) in matrix.html_page(interpreted, report, "note", perf)
    assert CAVEAT in matrix.markdown(interpreted, report, "note", perf)


def test_bandwidth_above_the_copy_ceiling_is_flagged_not_reported():
    row = {"gbps": 5000.0, "reason": "agrees with ATen"}
    runner._share_of_copy(row, copy_gbps=4000.0)
    assert row["gbps"] is None and "pct_copy_bw" not in row
    assert row["reason"].startswith("bandwidth not reported") and "125% of the copy ceiling" in row["reason"]
    fine = {"gbps": 3000.0, "reason": ""}
    runner._share_of_copy(fine, copy_gbps=4000.0)
    assert fine["pct_copy_bw"] == 75.0 and fine["gbps"] == 3000.0


# ---------------------------------------------------------------- the runner in-process, with fake operators

def _fake(name, overload, call, perf=None, dtypes=(torch.float32,)):
    return OpSpec(name=name, family="pointwise", impls={overload: lambda *a, **k: None}, call=call,
                  samples=lambda dtype, device, quick: [], dtypes=dtypes, perf=perf)


def _inputs(shape, dtype, device):
    return Sample("perf", (torch.rand(shape, dtype=dtype, device=device),))


def _raising(exc):
    def inputs(shape, dtype, device):
        raise exc
    return inputs


def _book(tmp_path, text=None) -> shapes.ShapeBook:
    path = tmp_path / "shapes.yaml"
    path.write_text(text or "dtypes: {quick: [float32]}\nkeys:\n  tiny:\n    quick: [[64]]\n")
    return shapes.load(path)


@pytest.fixture
def fake_kernels(monkeypatch):
    """Register Python 'kernels' for three ATen overloads: one wrong, one that falls back, one right."""
    monkeypatch.setattr(registration, "kernels_call_torch", True)  # their torch calls must reach ATen
    previous = registration.snapshot()

    def wrong_neg(x):
        return torch.neg(x) + 1

    def unhandled_abs(x):
        raise gems.Fallback("fake: abs is not handled")

    def right_exp(x):
        return torch.exp(x)

    table = {"neg": (wrong_neg, Autograd.disable, "fneg"), "abs": (unhandled_abs, Autograd.disable,
             "fabs"), "exp": (right_exp, Autograd.disable, "fexp")}
    yield lambda: _applied(table, previous)


class _applied:
    def __init__(self, table, previous):
        self.table, self.previous = table, previous

    def __enter__(self):
        registration.apply(self.table, "CPU")

    def __exit__(self, *exc):
        registration.apply(self.previous, "CPU")


def test_bad_cases_are_recorded_and_the_run_goes_on(tmp_path, fake_kernels):
    backend = selection.current()
    perf = PerfSpec(inputs=_inputs, shapes="tiny", bytes=lambda s, r: 2 * r.numel() * r.element_size())
    specs = [
        _fake("fneg", "neg", torch.neg, perf),
        _fake("fabs", "abs", torch.abs, perf),
        _fake("fexp", "exp", torch.exp, perf),
        _fake("noperf", "sin", torch.sin, None),
        _fake("nokey", "cos", torch.cos, PerfSpec(inputs=_inputs, shapes="no-such-key")),
        _fake("oom", "tan", torch.tan, PerfSpec(
            inputs=_raising(torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 8 GiB")), shapes="tiny")),
        _fake("broken", "tanh", torch.tanh, PerfSpec(inputs=_raising(ValueError("bad shape")), shapes="tiny")),
    ]
    run = runner.measure(specs, _book(tmp_path), "quick", backend, plan=timing.INTERPRETER_PLAN, progress=False,
                         register=fake_kernels)
    by_op = {r["op"]: r for r in run.rows}
    assert {op: r["status"] for op, r in by_op.items()} == {
        "fneg": "mismatch", "fabs": "fallback", "fexp": "ok", "noperf": "no-perf", "nokey": "no-perf",
        "oom": "oom", "broken": "error"}
    # A wrong result is never a speedup, and is not even timed.
    assert by_op["fneg"]["speedup"] is None and by_op["fneg"]["aten_ms"] is None
    assert "float64 oracle" in by_op["fneg"]["reason"]
    assert "fake: abs is not handled" in by_op["fabs"]["reason"] and by_op["fabs"]["speedup"] is None
    assert "no-such-key" in by_op["nokey"]["reason"] and "OpSpec.perf is None" in by_op["noperf"]["reason"]
    assert "out of memory" in by_op["oom"]["reason"] and "bad shape" in by_op["broken"]["reason"]
    ok = by_op["fexp"]
    assert ok["speedup"] > 0 and ok["size_class"] == "small" and ok["gems_percall_us"] > 0 and ok["gbps"] > 0
    assert row_speedup(ok) == pytest.approx(ok["aten_percall_us"] / ok["gems_percall_us"])
    assert run.counts() == {"ok": 1, "mismatch": 1, "fallback": 1, "unsupported": 0, "no-perf": 2, "oom": 1,
                            "error": 1}
    summary = summary_markdown(run)
    assert "| 1 | 1 | 1 | 0 | 2 | 1 | 1 |" in summary  # the status counts
    assert aggregates(run.rows)["cases"] == 1


def test_a_call_atens_device_kernel_refuses_is_unsupported_not_an_error(tmp_path, fake_kernels):
    """angle of fp16 on CUDA: ATen raises NotImplementedError (gems computes it), so there is no speedup to take."""
    def no_aten_kernel(x):
        raise NotImplementedError('"angle_cuda" not implemented for \'Half\'')

    spec = replace(_fake("fexp", "exp", torch.exp, PerfSpec(inputs=_inputs, shapes="tiny")), reference=no_aten_kernel)
    run = runner.measure([spec], _book(tmp_path), "quick", selection.current(), plan=timing.INTERPRETER_PLAN,
                         progress=False, register=fake_kernels)
    (row,) = run.rows
    assert row["status"] == "unsupported" and row["speedup"] is None and row["gems_ms"] is None
    assert row["reason"].startswith("ATen has no kernel for it on this device") and "angle_cuda" in row["reason"]


def test_ctrl_c_keeps_the_finished_cases_and_exits_130(tmp_path, fake_kernels, monkeypatch, capsys):
    specs = [_fake(name, op, fn, PerfSpec(inputs=_inputs, shapes="tiny")) for name, op, fn in (
        ("fexp", "exp", torch.exp), ("fneg", "neg", torch.neg), ("fabs", "abs", torch.abs))]
    real, started = runner.run_case, []

    def interrupted_on_the_second(case, *args):
        started.append(case.spec.name)
        if len(started) == 2:
            raise KeyboardInterrupt
        return real(case, *args)

    monkeypatch.setattr(runner, "run_case", interrupted_on_the_second)
    run = runner.measure(specs, _book(tmp_path), "quick", selection.current(), plan=timing.INTERPRETER_PLAN,
                         progress=False, register=fake_kernels)
    assert run.interrupted == 3 and [r["op"] for r in run.rows] == ["fexp"]

    def interrupted_run(**options):
        run.written = [tmp_path / "perf.csv"]
        return run

    monkeypatch.setattr(perf_run, "run_perf", interrupted_run)
    assert cli.main(["--quick", "--out", str(tmp_path)]) == 130
    assert "interrupted after 1 of 3 cases; the finished ones are written" in capsys.readouterr().err


def test_a_stop_reason_ends_the_run_between_cases_and_keeps_the_finished(tmp_path, fake_kernels, monkeypatch, capsys):
    specs = [_fake(name, op, fn, PerfSpec(inputs=_inputs, shapes="tiny")) for name, op, fn in (
        ("fexp", "exp", torch.exp), ("fneg", "neg", torch.neg), ("fabs", "abs", torch.abs))]
    asked = []

    def stop():  # the time limit passes after the first case
        asked.append(True)
        return "the time limit (--time-limit 1 s)" if len(asked) > 1 else ""

    run = runner.measure(specs, _book(tmp_path), "quick", selection.current(), plan=timing.INTERPRETER_PLAN,
                         progress=False, register=fake_kernels, stop=stop)
    assert run.interrupted == 3 and [r["op"] for r in run.rows] == ["fexp"] and len(asked) == 2
    monkeypatch.setattr(perf_run, "run_perf", lambda **options: run)
    assert cli.main(["--quick", "--out", str(tmp_path)]) == 130
    assert "stopped by the time limit (--time-limit 1 s) after 1 of 3 cases" in capsys.readouterr().err


def test_stopper_says_why_a_run_stops(monkeypatch):
    event = SimpleNamespace(is_set=lambda: False)
    assert parallel.stopper(None, "the limit", event, os.getppid())() == ""
    assert parallel.stopper(0.0, "the limit", event)() == "the limit"  # a deadline long past
    assert parallel.stopper(None, "", SimpleNamespace(is_set=lambda: True))() == "Ctrl-C"
    assert "process that started it" in parallel.stopper(None, "", None, os.getppid() + 1)()


def test_dtypes_the_vendor_or_the_operator_lacks_are_unsupported(tmp_path):
    book = _book(tmp_path)
    spec = _fake("fexp", "exp", torch.exp, PerfSpec(inputs=_inputs, shapes="tiny"),
                 dtypes=(torch.float32, torch.float16))
    tiny_vendor = SimpleNamespace(name="tiny", capabilities=Capabilities(dtypes=frozenset({torch.float32})))
    cases = runner.list_cases([spec], book, "quick", tiny_vendor, dtypes=(torch.float32, torch.float16, torch.int8))
    outcome = {str(c.dtype): (c.status, c.reason) for c in cases}
    assert outcome["torch.float32"] == (None, "")
    assert outcome["torch.float16"] == ("unsupported", "vendor tiny does not support float16")
    assert outcome["torch.int8"] == ("unsupported", "fexp does not declare int8")


def test_size_class_from_threshold_or_explicit(tmp_path):
    text = "small_max_numel: 100\nkeys:\n  k:\n    core: [[10, 10], [101], {shape: [5], size: large}]\n"
    book = _book(tmp_path, text)
    assert [(s.text, s.size_class) for s in book.shapes("k", "core")] == [
        ("10x10", "small"), ("101", "large"), ("5", "large")]
    assert book.shapes("k", "full") is None and "no 'full' suite" in book.why_missing("k", "full")
    assert book.shapes("other", "core") is None and "'other'" in book.why_missing("other", "core")


@pytest.mark.parametrize("text, message", [
    ("keys: [1, 2", "not valid YAML"),
    ("keys:\n  k:\n    core: [[-1]]\n", "non-negative integers"),
    ("keys:\n  k:\n    nightly: [[4]]\n", "unknown suite"),
    ("dtypes: {core: [float17]}\nkeys: {}\n", "dtype names"),
    ("keys:\n  k:\n    core: [{shape: [4], size: huge}]\n", "size must be one of"),
])
def test_bad_shapes_file_names_file_and_entry(tmp_path, text, message):
    path = tmp_path / "shapes.yaml"
    path.write_text(text)
    with pytest.raises(shapes.ShapesError, match=message) as error:
        shapes.load(path)
    assert str(path) in str(error.value)


def test_repository_shapes_file_loads_with_the_required_core_sizes():
    book = shapes.load(REPO / "perf" / "shapes.yaml")
    core = {s.numel: s.size_class for s in book.shapes("pointwise", "core")}
    assert core[64 * 2**20] == "large" and core[4096] == "small"
    for key in ("pointwise", "reduction", "softmax"):
        for suite in ("quick", "core", "full"):  # "models" is for the operators that have model shapes
            assert book.shapes(key, suite), (key, suite)
        assert {s.size_class for s in book.shapes(key, "quick")} == {"small", "large"}


def test_the_models_suite_is_the_operators_with_model_shapes():
    book = shapes.load(REPO / "perf" / "shapes.yaml")
    chosen = {s.name for s in runner.with_shapes(runner.select_specs(None), book, "models")}
    assert {"mm", "addmm", "bmm", "baddbmm", "scaled_dot_product_attention"} <= chosen
    assert not chosen & {"add", "sum", "layer_norm", "cat"}  # no models shapes: left out, not no-perf rows
    cases = runner.list_cases(runner.with_shapes(runner.select_specs(None), book, "models"), book, "models",
                              selection.current(), None)
    assert cases and all(c.status is None for c in cases)


def test_a_size_class_keeps_only_its_shapes_and_the_operators_that_have_them():
    book = shapes.load(REPO / "perf" / "shapes.yaml")
    for size in shapes.SIZE_CLASSES:
        sized = book.of_size(size)
        assert {s.size_class for s in sized.shapes("pointwise", "core")} == {size}
        specs = runner.with_shapes(runner.select_specs(None), sized, "core")
        cases = runner.list_cases(specs, sized, "core", selection.current(), None)
        assert cases and all(c.shape.size_class == size for c in cases if c.status is None)
    small = book.of_size("small")
    only_large = [k for k, suites in book.keys.items()
                  if suites.get("core") and all(s.size_class == "large" for s in suites["core"])]
    assert only_large and all(small.shapes(k, "core") is None for k in only_large)


def test_an_unknown_size_class_is_refused_before_benchmarking(capsys, no_benchmark):
    with pytest.raises(SystemExit):
        cli.main(["--quick", "--size", "tiny", "--no-progress"])
    assert "--size" in capsys.readouterr().err
    with pytest.raises(runner.PerfError, match="--size 'tiny'"):
        perf_run.run_perf(quick=True, size="tiny", progress=False)


# ---------------------------------------------------------------- the command line: errors before any benchmark

@pytest.fixture
def no_benchmark(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a benchmark started although the options were bad")
    monkeypatch.setattr(runner, "measure", refuse)


def test_unwritable_out_fails_before_benchmarking(tmp_path, capsys, no_benchmark):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    assert cli.main(["--quick", "--out", str(blocker / "sub"), "--no-progress"]) == 2
    error = capsys.readouterr().err
    assert "--out" in error and "not a writable directory" in error and str(blocker / "sub") in error


@pytest.mark.parametrize("argv, message", [
    (["--vendor", "nosuch"], "unknown vendor 'nosuch'"),
    (["--ops", "addd"], "did you mean add"),
    (["--dtypes", "float17"], "unknown dtype 'float17'"),
    (["--jobs", "0"], "--jobs 0: give 1 or more"),
    (["--devices", "0,7"], "--devices 0,7: there is no cpu device 7 here (vendor interpreter's devices: 0)"),
    (["--devices", "1,1"], "device 1 is named twice"),
    (["--devices", "gpu0"], "give device indices separated by commas"),
    (["--time-limit", "-5"], "--time-limit -5.0: give a number of seconds above 0"),
])
def test_bad_options_are_clear_errors(tmp_path, capsys, no_benchmark, argv, message):
    assert cli.main(["--quick", "--out", str(tmp_path), "--no-progress", *argv]) == 2
    error = capsys.readouterr().err
    assert message in error and error.count("\n") == 1 and error.startswith("gems-perf: error: ")


def test_list_ops_names_every_operator_with_its_overloads(capsys):
    assert cli.main(["--list-ops"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines[:-1]] == gems.ops.names()
    assert re.match(r"abs +pointwise +abs, abs_, abs.out$", next(line for line in lines if line.startswith("abs ")))
    assert lines[-1].startswith(f"{len(gems.ops.names())} operators")


def test_console_script_points_at_main():
    declared = re.search(r'^gems-perf\s*=\s*"([\w.]+):(\w+)"', (REPO / "pyproject.toml").read_text(), re.M)
    assert declared and (declared.group(1), declared.group(2)) == ("gems.perf.__main__", "main")
    installed = [e for e in importlib.metadata.entry_points(group="console_scripts") if e.name == "gems-perf"]
    # An editable install made before the script was declared has no entry point yet; a fresh one does.
    assert all(entry.load() is cli.main for entry in installed)


def test_quantile_and_row_speedup_rules():
    assert timing.quantile([4, 1, 3, 2, 5], 0.5) == 3
    assert timing.quantile([1, 2], 0.2) == pytest.approx(1.2)
    small = {"status": "ok", "size_class": "small", "speedup": "9", "aten_percall_us": "10", "gems_percall_us": "5"}
    assert row_speedup(small) == 2.0
    assert row_speedup({**small, "size_class": "large"}) == 9.0
    assert row_speedup({**small, "status": "mismatch"}) is None


def test_operator_left_to_aten_by_the_vendor_is_a_recorded_fallback(tmp_path):
    spec = _fake("fexp", "exp", torch.exp, PerfSpec(inputs=_inputs, shapes="tiny"))
    vendor = SimpleNamespace(name="v", capabilities=Capabilities(), unused_ops=lambda: {"exp"})
    (case,) = runner.list_cases([spec], _book(tmp_path), "quick", vendor)
    assert case.status == "fallback" and "get_unused_ops()" in case.reason


def test_device_timer_path_alternates_providers_through_do_bench(monkeypatch):
    """The GPU path (do_bench, per-call batches sized from an estimate) wired to a stand-in do_bench."""
    import triton.testing

    order = []

    def fake_do_bench(fn, warmup, rep, return_mode):
        assert return_mode == "all" and warmup > 0 and rep > 0
        fn()
        return [1.0, 2.0, 3.0]

    monkeypatch.setattr(triton.testing, "do_bench", fake_do_bench)
    plan = timing.TimingPlan(rounds=3, percall_rounds=2, percall_target_ms=0.5, percall_min_calls=3,
                             percall_max_calls=40, copy_bytes=1 << 12)
    timer = timing.DoBenchTimer("cpu", plan)
    assert timer.name == "do_bench" and timer.flush.startswith("do_bench-l2-flush")
    providers = [timing.Provider("aten", lambda: order.append("A")), timing.Provider("gems", lambda: order.append("B"))]
    stats = timing.kernel_times(timer, providers)
    assert order == ["A", "B"] * 3
    assert stats["aten"].n == 9 and stats["gems"].median == 2.0 and stats["gems"].p20 == 1.0
    order.clear()
    percall = timing.per_call_times("cpu", plan, providers)
    assert percall["aten"].n == 2 and percall["gems"].median > 0
    assert order.count("A") == order.count("B") and 3 <= order.count("A") <= 3 + 2 * (40 + 1) + 1
    assert timing.copy_bandwidth("cpu", timer) == pytest.approx(2 * 4096 / 2.0e-3 / 1e9)


def test_a_declared_device_gap_is_reported_as_unsupported_not_as_a_wrong_result(tmp_path, fake_kernels, monkeypatch):
    """A device with no ATen answer checks perf results by the tolerance rule alone: where its vendor
    declares the gap (variant "perf"), the case is listed with the reason, not counted as a mismatch."""
    backend = selection.current()
    perf = PerfSpec(inputs=_inputs, shapes="tiny", bytes=lambda s, r: 2 * r.numel() * r.element_size())
    gaps = {"fneg": {"perf/float32": "no aten-parity rule without ATen"}}
    monkeypatch.setattr(type(backend), "device_gaps", lambda self: gaps)
    run = runner.measure([_fake("fneg", "neg", torch.neg, perf)], _book(tmp_path), "quick", backend,
                         plan=timing.INTERPRETER_PLAN, progress=False, register=fake_kernels)
    (row,) = run.rows
    assert row["status"] == "unsupported" and row["speedup"] is None
    assert row["reason"].startswith("device gap (no aten-parity rule without ATen)") and "oracle" in row["reason"]


# ---------------------------------------------------------------- several processes: precompile workers, device shards

# A pointwise operator and a tuned product (gems/ops/blas/tuning.py), two shapes each: few cases, both launch paths.
PARALLEL_OPS = "add,mm"


def _outcomes(run) -> list:
    return [(r["op"], r["dtype"], r["shape"], r["status"]) for r in run.rows]


@pytest.mark.skipif(os.environ.get("GEMS_VENDOR", "interpreter") != "interpreter",
                    reason="treats the CPU as two devices; on a GPU machine runs/perf_fast.sh runs the real thing")
def test_precompile_workers_and_device_shards_leave_every_row_as_one_process_makes_it(tmp_path, monkeypatch):
    options = {"ops": PARALLEL_OPS, "dtypes": "float32", "quick": True, "progress": False}
    alone = perf_run.run_perf(out=tmp_path / "alone", **options)
    assert len(alone.rows) == 4 and {r["status"] for r in alone.rows} == {"ok"} and not alone.notes

    monkeypatch.setattr(parallel, "device_count", lambda device: 2)  # the CPU as two devices: shards in 2 processes
    run = perf_run.run_perf(out=tmp_path / "parallel", jobs=2, devices="0,1", **options)
    assert _outcomes(run) == _outcomes(alone) and run.devices == (0, 1) and run.interrupted is None
    (note,) = run.notes
    assert re.search(r"precompile: first calls of 4 of 4 cases made by [12] worker processes in \d+ s\)", note), note
    summary = (tmp_path / "parallel" / "perf_summary.md").read_text()
    assert note in summary and "Timed on 2 devices at once (indices 0, 1)" in summary
    with open(tmp_path / "parallel" / "perf.csv", newline="") as handle:
        assert [(r["op"], r["dtype"], r["shape"], r["status"]) for r in csv.DictReader(handle)] == _outcomes(alone)


@pytest.mark.skipif(os.environ.get("GEMS_VENDOR", "interpreter") != "interpreter",
                    reason="treats the CPU as two devices; on a GPU machine runs/perf_fast.sh runs the real thing")
def test_device_shards_keep_to_the_size_class(tmp_path, monkeypatch):
    """--size with --devices: each shard's process cuts its shapes as the parent did (it reloads the shapes file;
    it once timed the other size class too)."""
    options = {"ops": "add,neg", "dtypes": "float32", "quick": True, "progress": False, "size": "small", "jobs": 1}
    alone = perf_run.run_perf(out=tmp_path / "alone", **options)
    monkeypatch.setattr(parallel, "device_count", lambda device: 2)
    run = perf_run.run_perf(out=tmp_path / "parallel", devices="0,1", **options)
    assert alone.rows and {r["size_class"] for r in alone.rows} == {"small"}
    assert _outcomes(run) == _outcomes(alone)


def test_a_shard_that_fails_leaves_its_cases_as_errors_in_case_order(tmp_path, fake_kernels):
    specs = [_fake(name, op, fn, PerfSpec(inputs=_inputs, shapes="tiny")) for name, op, fn in (
        ("fexp", "exp", torch.exp), ("fneg", "neg", torch.neg), ("fsin", "sin", torch.sin), ("nope", "cos", torch.cos))]
    specs[3] = _fake("nope", "cos", torch.cos, None)  # no perf: recorded as such whichever shard had it
    book, backend = _book(tmp_path), selection.current()
    cases = runner.list_cases(specs, book, "quick", backend)
    first = runner.measure(specs, book, "quick", backend, plan=timing.INTERPRETER_PLAN, progress=False,
                           register=fake_kernels, shard=(0, 2))
    assert [r["op"] for r in first.rows] == ["fexp", "fsin"]
    run = parallel.merge({0: first, 1: "its process died (exit code -9)"}, cases, (0, 1))
    assert [(r["op"], r["status"]) for r in run.rows] == [("fexp", "ok"), ("fneg", "error"), ("fsin", "fallback"),
                                                          ("nope", "no-perf")]
    assert run.rows[1]["reason"] == "the shard on device 1 failed: its process died (exit code -9)"
    assert run.rows[1]["vendor"] == "interpreter" and run.devices == (0, 1)
    with pytest.raises(runner.PerfError, match="no device's shard ran: device 0: boom; device 1: bang"):
        parallel.merge({0: "boom", 1: "bang"}, cases, (0, 1))


@triton.jit
def _block_kernel(y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.full([BLOCK], BLOCK, tl.int32), mask=offs < n)


def test_precompile_tuning_runs_every_config_untimed_and_remembers_nothing(tmp_path, monkeypatch):
    """What a precompile worker does with a tuned kernel: no benchmark (the interpreter has none: Triton's would
    raise), every config compiled and run once, and no choice kept, in gems' cache or Triton's autotuner."""
    from gems.ops.blas import tuning
    from gems.runtime import configs

    monkeypatch.setenv("GEMS_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(tuning, "_compile_only", False)  # restored after the test
    autotuner = configs.autotune([triton.Config({"BLOCK": 16}), triton.Config({"BLOCK": 32})], ["n"])(_block_kernel)
    ran, run = [], autotuner.fn.run

    def recorded(*args, **kwargs):
        ran.append(kwargs["BLOCK"])
        return run(*args, **kwargs)

    monkeypatch.setattr(autotuner.fn, "run", recorded)
    tuned, disk_cache = tuning.Tuned(autotuner), autotuner.cache_results
    tuning.compile_only()
    for _ in range(2):  # the same class twice: every config runs again, as nothing was chosen
        y = torch.zeros(20, dtype=torch.int32, device=gems.vendor().device)
        meta = tuned.launch(lambda meta: (triton.cdiv(20, meta["BLOCK"]),), y, 20)
        assert meta["BLOCK"] == 16 and torch.all(y == 16)  # the first config serves the call
    assert ran == [16, 32, 16] * 2
    assert not tuned.chosen and not autotuner.cache and not (tmp_path / "tuning").exists()
    assert "do_bench" not in vars(autotuner) and autotuner.cache_results is disk_cache  # Triton's own, as before
