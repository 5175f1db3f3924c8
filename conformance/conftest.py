"""pytest plugin for the conformance suite: options, one test per case, results and the support matrix.

    pytest conformance --vendor nvidia [--quick] [--ops add,softmax] [--dtypes float16,bfloat16]
                       [--report-dir DIR] [--time-limit SECONDS] [--cell-durations FILE] [-m softmax] [-n 8]
"""

from __future__ import annotations

import difflib
import os
import signal
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
import torch

import gems
from gems.models import conformance as model_cases
from gems.perf import matrix
from gems.report import conformance_report, durations, environment
from gems.runtime import registration, selection
from gems.testing import compare
from gems.testing.cases import dtype_name, list_cases
from gems.testing.worker_restart import pytest_runtest_protocol  # noqa: F401  (a lost device: a fresh worker)
from gems.testing.xdist_groups import (
    keep_collection_order,
    pytest_collection_modifyitems,  # noqa: F401  (--dist loadgroup)
)

DTYPES = {dtype_name(d): d for d in (
    torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.int8, torch.int16, torch.int32,
    torch.int64, torch.uint8, torch.bool)}


def pytest_addoption(parser):
    group = parser.getgroup("gems conformance")
    group.addoption("--vendor", default=None, help="vendor backend to test (default: detected)")
    group.addoption("--quick", action="store_true", help="small shapes (CI, the interpreter)")
    group.addoption("--ops", default=None, help="comma-separated operators to test (default: all)")
    group.addoption("--dtypes", default=None, help="comma-separated dtypes, e.g. float16,bfloat16")
    group.addoption("--report-dir", default=None, help="where results go (default: runs/<vendor>/)")
    group.addoption("--time-limit", type=float, default=None, metavar="SECONDS",
                    help="start no case later than this many seconds after the run started: the rest are skipped "
                         "and the report is written from the cases that ran, with a note of how many did (for a "
                         "machine lent for a fixed time; default: no limit)")
    group.addoption("--cell-durations", default=None, metavar="FILE",
                    help="seconds per operator-dtype cell from an earlier run (a durations.json or a case-level "
                         "conformance.json), to send the longest cells first under -n (default: the vendor's "
                         "reports/<vendor>/durations.json, else its base vendor's; none: case counts)")


class ConformanceRun:
    """What this session tests, and what it found."""

    def __init__(self, config):
        self.backend = _select_vendor(config.getoption("--vendor"))
        self.quick = config.getoption("--quick")
        self.all_specs, self.specs, models = _selected_specs(config.getoption("--ops"))
        self.dtypes = _selected_dtypes(config.getoption("--dtypes"))
        self.cases = list_cases(self.specs, self.dtypes, self.quick)
        self.model_cases = model_cases.list_cases(models, self.dtypes, self.quick)
        self.collected = Counter(case.op for case in (*self.cases, *self.model_cases))
        self.overrides = _load_overrides(self.backend, [spec.name for spec in self.all_specs])
        self.time_limit = config.getoption("--time-limit")
        # one deadline for the controller and every xdist worker: the controller's clock at its start
        started = getattr(config, "workerinput", {}).get("gems_started", time.time())
        self.deadline = None if self.time_limit is None else started + self.time_limit
        report_dir = config.getoption("--report-dir")
        self.report_dir_given = bool(report_dir)
        self.selected = bool(config.getoption("--ops") is not None or config.getoption("--dtypes"))
        self.report_dir = Path(report_dir) if report_dir else environment.default_run_dir(self.backend.name)
        if self.selected and not report_dir:
            self.report_dir /= "partial"  # a partial run never replaces the whole suite's results
        self.results: list[dict] = []
        self.written: list[Path] = []
        self.interrupted_by = ""  # a signal's name, once one stopped the run
        self.finishing = False  # writing the report: a SIGTERM no longer interrupts
        self.groups: dict[str, str] = {}  # case id -> xdist group, under -n (_group_cases_by_kernels)


def _select_vendor(name):
    try:
        backend = selection.select(name, why="the --vendor option") if name else selection.current()
    except gems.VendorError as exc:
        raise pytest.UsageError(f"--vendor: {exc}" if name else str(exc)) from exc
    return backend


def _selected_specs(option):
    """(every operator, the selected operators, the selected model cases' names or None for all)."""
    from gems import ops  # only once --vendor is applied: importing op modules defines kernels

    specs = ops.all_specs()
    if option is None:
        return specs, specs, None
    wanted = [name.strip() for name in option.split(",") if name.strip()]
    if not wanted:
        raise pytest.UsageError("--ops: empty selection; name at least one operator (`python -c \"import gems.ops; "
                                "print(gems.ops.names())\"` lists them), or leave --ops out to run them all")
    known = [s.name for s in specs] + model_cases.names()
    unknown = [name for name in wanted if name not in known]
    if unknown:
        hints = {name: difflib.get_close_matches(name, known, n=3) for name in unknown}
        text = "; ".join(f"{n!r} (did you mean {', '.join(h)}?)" if h else repr(n) for n, h in hints.items())
        raise pytest.UsageError(f"--ops: unknown operator(s) {text}. Known: {', '.join(known)}")
    return specs, tuple(s for s in specs if s.name in wanted), [n for n in wanted if n in model_cases.names()]


def _selected_dtypes(option):
    if not option:
        return None
    chosen = []
    for name in (n.strip() for n in option.split(",") if n.strip()):
        if name not in DTYPES:
            raise pytest.UsageError(f"--dtypes: unknown dtype {name!r}; known: {', '.join(DTYPES)}")
        chosen.append(DTYPES[name])
    return tuple(chosen)


def _load_overrides(backend, known_ops):
    overrides = {}
    for member in reversed(list(backend.chain())):  # a vendor's own entries win over its base's
        path = member.directory / "conformance_overrides.yaml"
        try:
            entries = compare.load_overrides(path)
        except ValueError as exc:
            raise pytest.UsageError(str(exc)) from exc
        try:
            compare.check_override_names(entries, path, known_ops, DTYPES)
        except ValueError as exc:
            raise pytest.UsageError(str(exc)) from exc
        overrides.update(entries)
    return overrides


def _use_own_device(backend):
    """Under pytest-xdist, worker gwN takes device N mod count: N GPUs run the suite N times faster."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    module = getattr(torch, backend.device, None)
    if worker and backend.device != "cpu" and hasattr(module, "set_device"):
        module.set_device(int(worker.removeprefix("gw")) % max(module.device_count(), 1))


def _share_cpu_cores():
    """N workers each computing float64 oracles with all cores would oversubscribe the CPU N times."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if workers > 1:
        torch.set_num_threads(max(1, (os.cpu_count() or 1) // workers))


def _group_cases_by_kernels(config):
    """``-n N`` sends the cases of one operator and dtype, which share their kernels, to one worker:
    each kernel then compiles once, not once per worker (xdist's loadgroup; plain load otherwise). Where a
    cell is long beside a worker's share of the run, the groups are collected longest first, and a cell
    longer than half that share is cut into several groups (gems/report/durations.py)."""
    run = config.gems_conformance
    if getattr(config.option, "dist", "no") == "load":
        config.option.dist = "loadgroup"
    elif getattr(config, "workerinput", {}).get("gems_loadgroup"):
        config.option.loadgroup = True  # workers re-parse the command line: they name their groups too
    keep_collection_order(config)
    if not (getattr(config.option, "loadgroup", False) or getattr(config.option, "dist", "no") == "loadgroup"):
        return
    cases = (*run.cases, *run.model_cases)
    expected = durations.expected_seconds(Counter(_cell(case) for case in cases), _known_cell_seconds(config, run))
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))  # set in the workers, which collect
    if not durations.worth_ordering(expected, workers):
        return  # no cell long enough to matter: collection order (each operator's cells together) is faster
    parts = durations.parts_per_cell(expected, workers)
    seen = Counter()
    for case in cases:  # the cases of a cut cell are dealt out in turn, so that each part has every kind of sample
        cell = _cell(case)
        part = seen[cell] % parts[cell]
        seen[cell] += 1
        run.groups[case.id] = f"{case.op}-{dtype_name(case.dtype)}" + (f"-part{part}" if parts[cell] > 1 else "")
    config.gems_group_seconds = {run.groups[case.id]: expected[_cell(case)] / parts[_cell(case)] for case in cases}


def _cell(case) -> str:
    return f"{case.op}::{dtype_name(case.dtype)}"


def _known_cell_seconds(config, run) -> dict[str, float]:
    """Seconds per cell of an earlier run, from the first file found: --cell-durations, then
    reports/<vendor>/durations.json up the vendor's chain; {} without one."""
    given = config.getoption("--cell-durations")
    if given and not Path(given).is_file():
        raise pytest.UsageError(f"--cell-durations: no file {given}; name a durations.json or a conformance.json")
    reports = Path(__file__).resolve().parent.parent / "reports"
    paths = [Path(given)] if given else [reports / m.name / durations.FILE for m in run.backend.chain()]
    for path in paths:
        try:
            known = durations.load(path)
        except ValueError as exc:
            raise pytest.UsageError(str(exc)) from exc
        if known:
            return known
    return {}


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    if node.config.option.dist == "loadgroup":
        node.workerinput["gems_loadgroup"] = True
    run = getattr(node.config, "gems_conformance", None)
    if run is not None and run.deadline is not None:
        node.workerinput["gems_started"] = run.deadline - run.time_limit


def pytest_runtest_setup(item):
    run = getattr(item.config, "gems_conformance", None)
    if run is not None and run.deadline is not None and time.time() > run.deadline:
        pytest.skip(f"not run: --time-limit {run.time_limit:g} s had passed")


def pytest_configure(config):
    if config.getoption("--help", default=False):
        return
    run = ConformanceRun(config)
    config.gems_conformance = run
    _use_own_device(run.backend)
    _share_cpu_cores()
    _stop_on_sigterm(config, run)
    _group_cases_by_kernels(config)
    for spec in run.all_specs:
        config.addinivalue_line("markers", f"{spec.name}: conformance cases of the {spec.name} operator")
    for name in model_cases.names():
        config.addinivalue_line("markers", f"{name}: conformance cases of the {name.removeprefix('model_')} model")


def _stop_on_sigterm(config, run) -> None:
    """SIGTERM (what `timeout` and a job scheduler send when a machine's time is up) stops the run as Ctrl-C
    does: pytest ends the session, and the report is still written from the cases that finished, with a note
    of how many did. (Killed outright, a whole-suite run that had reached 100% left no report.) In the
    controller only: an xdist worker that gets the signal too just ends."""
    if hasattr(config, "workerinput") or threading.current_thread() is not threading.main_thread():
        return
    previous = signal.getsignal(signal.SIGTERM)

    def stop(signum, frame):
        if run.finishing:  # the report is being written: let it finish (a second signal, SIGKILL, still ends it)
            return
        run.interrupted_by = signal.Signals(signum).name
        raise KeyboardInterrupt(f"{run.interrupted_by}: the conformance run was stopped")

    signal.signal(signal.SIGTERM, stop)
    config.add_cleanup(lambda: signal.signal(signal.SIGTERM, previous))


def pytest_report_header(config):
    run = getattr(config, "gems_conformance", None)
    if run is not None:
        return [f"gems conformance: vendor {run.backend.name} ({selection.selected_because()}), device "
                f"{run.backend.device}, {'quick' if run.quick else 'full'} mode, {len(run.cases)} cases, "
                f"results to {run.report_dir}"]
    return []


def pytest_generate_tests(metafunc):
    run = metafunc.config.gems_conformance
    for name, cases in (("case", run.cases), ("model_case", run.model_cases)):
        if name in metafunc.fixturenames:
            metafunc.parametrize(name, [pytest.param(c, id=c.id, marks=_marks(c, run)) for c in cases])


def _marks(case, run):
    group = run.groups.get(case.id, f"{case.op}-{dtype_name(case.dtype)}")
    return [getattr(pytest.mark, case.op), pytest.mark.xdist_group(group)]


@pytest.fixture
def conformance(request):
    """The session's ConformanceRun, with gems registered for the vendor (tests/ may have changed it)."""
    run = request.config.gems_conformance
    if not registration.registered_ops():
        gems.enable()
    return run


@pytest.fixture
def report_case(request, conformance):
    """``report_case(result, case)``: apply the vendor's declared device gaps, record the result for the
    reports, and give pytest the case's outcome."""
    backend = conformance.backend

    def report(result, case):
        gap = backend.device_gap(case.op, case.variant, case.dtype)
        if gap and result.status in ("fail", "error"):
            result.status, result.message = "xfail", f"known gap of device {backend.device}: {gap} ({result.message})"
        elif gap and result.status == "pass":
            result.status, result.message = "xpass", f"declared as a gap of device {backend.device} but passes: {gap}"
        request.node.user_properties.append(("gems_case", result.to_json()))
        if result.status in ("fail", "error", "xpass"):
            pytest.fail(_failure_report(result), pytrace=False)
        if result.status == "xfail":
            pytest.xfail(result.message)
        if result.status == "unsupported":
            pytest.skip(result.message)

    return report


def _failure_report(result) -> str:
    tol = result.tolerance
    return "\n".join([
        f"{result.op} {result.dtype} {result.variant} (overload {result.overload}): {result.status.upper()}",
        f"  {result.message}",
        f"  shapes {result.shapes} strides {result.strides} seed {result.seed}",
        f"  max abs err {result.max_abs_err:.3g}, max rel err {result.max_rel_err:.3g}, "
        f"mismatch {result.mismatch_pct:.3g}%, max ULP {result.max_ulp:.3g} "
        f"(rtol {tol.get('rtol', 0):g}, atol {tol.get('atol', 0):g})",
        f"  reproduce: {result.repro}",
    ])


def pytest_runtest_logreport(report):
    for name, value in report.user_properties:
        if name == "gems_case" and report.when == "call":
            _session_run.results.append(value)


_session_run = None


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session):
    global _session_run
    _session_run = getattr(session.config, "gems_conformance", None)


def pytest_sessionfinish(session, exitstatus):
    run = _session_run
    if run is None or hasattr(session.config, "workerinput") or not run.results:
        return
    run.finishing = True  # a SIGTERM now would lose the whole report (a GPU shard at fe82a63 got one mid-json.dumps)
    if not run.report_dir_given and not run.selected and len(run.results) < sum(run.collected.values()):
        run.report_dir /= "partial"  # cases left out by -k, -m or -x: not the whole suite either
    env = environment.environment(run.backend)
    notes = list(run.backend.capabilities.notes)
    total = sum(run.collected.values())
    if len(run.results) < total and (run.interrupted_by or exitstatus == pytest.ExitCode.INTERRUPTED):
        notes.append(f"stopped by {run.interrupted_by or 'an interrupt (Ctrl-C)'}: {len(run.results)} of the "
                     f"{total} collected cases ran")
    elif run.deadline is not None and len(run.results) < total:
        notes.append(f"stopped by --time-limit {run.time_limit:g} s: {len(run.results)} of the {total} collected "
                     f"cases ran, the rest were not started")
    report = conformance_report.build(env, "quick" if run.quick else "full", dict(run.collected), run.results,
                                      notes=notes)
    run.written = conformance_report.write(run.report_dir, report)
    run.written += matrix.refresh(run.report_dir)  # a perf.csv there: the joined matrix follows this run
    run.report = report


def pytest_terminal_summary(terminalreporter):
    run = _session_run
    if run is None or not getattr(run, "written", None):
        return
    write = terminalreporter.write_line
    terminalreporter.section(f"gems conformance: {run.backend.name}")
    by_op = {}
    for case in run.results:
        by_op.setdefault(case["op"], Counter())[case["status"]] += 1
    width = max([24, *(len(op) + 1 for op in run.collected)])  # scaled_dot_product_attention is 28
    write(f"{'operator':<{width}}{'collected':>10}{'pass':>6}{'fail':>6}{'error':>6}{'fallbk':>7}{'xfail':>6}"
          f"{'unsup':>6}")
    for op in sorted(run.collected):
        c = by_op.get(op, Counter())
        write(f"{op:<{width}}{run.collected[op]:>10}{c['pass']:>6}{c['fail']:>6}{c['error']:>6}{c['fallback']:>7}"
              f"{c['xfail']:>6}{c['unsupported']:>6}")
    write(conformance_report.summary_line(run.report))
    for path in run.written:
        write(f"wrote {path}")
