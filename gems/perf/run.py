"""run_perf: the operator run of gems-perf, from options to written reports (the command line calls it).

Options are checked, and the output folder proven writable, before anything is compiled or timed. Then the
precompile workers (parallel.precompile) fill Triton's cache, and the cases are timed in this process, or in one
process per device (parallel.measure_on_devices) whose rows merge into one run; the reports are written last.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import gems
from gems import native
from gems.perf import parallel, report, runner, shapes, timing
from gems.perf.runner import PerfError, PerfRun
from gems.report import environment
from gems.runtime import selection
from gems.runtime.vendor import known_vendors


def _check_counts(jobs, time_limit) -> None:
    if jobs is not None and (type(jobs) is not int or jobs < 1):
        raise PerfError(f"--jobs {jobs}: give 1 or more (the precompile worker processes; 1: none, the timing "
                        f"process compiles as it goes)")
    if time_limit is not None and not time_limit > 0:
        raise PerfError(f"--time-limit {time_limit}: give a number of seconds above 0")


def _after_ctrl_c() -> str:
    """measure's stop() once Ctrl-C ended the precompile: no case starts."""
    return "Ctrl-C"


def run_perf(ops=None, dtypes=None, suite: str | None = None, quick: bool = False, out=None, vendor: str | None = None,
             shapes_file=None, progress: bool = True, plan: timing.TimingPlan | None = None, jobs: int | None = None,
             devices: str | None = None, time_limit: float | None = None, size: str | None = None) -> PerfRun:
    """Select the vendor, time the suite and write perf.csv, perf_summary.md, charts and the support matrix.

    ``gems-perf`` is this function; scripts call it directly, e.g. on a GPU machine::

        from gems.perf import run_perf
        run = run_perf(vendor="nvidia", suite="core", out="runs/nvidia")
        print(run.counts(), run.written)

    Options are checked, and ``out`` proven writable, before any benchmark starts. Without a suite, a device
    runs ``core`` and the CPU interpreter ``quick`` (its core shapes take minutes per case and time nothing).
    jobs: precompile worker processes (default: one per CPU core on a device that compiles, none on the
    interpreter; 1: none). devices: "0,1" times one shard of the cases per device, at once, and merges them.
    time_limit: seconds from now after which no case starts; the finished ones are written (``interrupted``).
    size: "small" or "large" times only the shapes of that size class, and only the operators that have such
    shapes in the suite (small: the per-call cases of every operator).
    """
    started = time.time()
    if suite is not None and suite not in shapes.SUITES:
        raise PerfError(f"unknown suite {suite!r}; choose one of {', '.join(shapes.SUITES)}")
    _check_counts(jobs, time_limit)
    if size is not None and size not in shapes.SIZE_CLASSES:
        raise PerfError(f"--size {size!r}: choose one of {', '.join(shapes.SIZE_CLASSES)}")
    if vendor and vendor not in known_vendors():
        raise PerfError(f"--vendor: unknown vendor {vendor!r}; known vendors: {', '.join(known_vendors())}")
    try:
        backend = selection.select(vendor, why="the vendor argument (--vendor)") if vendor else selection.current()
    except gems.VendorError as exc:
        raise PerfError(f"--vendor: {exc}" if vendor else str(exc)) from exc
    specs, dtypes = runner.select_specs(ops), runner.parse_dtypes(dtypes)
    try:
        book = shapes.load(shapes_file)
    except shapes.ShapesError as exc:
        raise PerfError(str(exc)) from exc
    if quick or (suite is None and timing.interpreted()):
        suite = "quick"
    suite = suite or "core"
    if size:
        book = book.of_size(size)
    if size or (suite == "models" and not ops):
        specs = runner.with_shapes(specs, book, suite)
    chosen = parallel.parse_devices(devices, backend)
    out = runner.check_out_dir(Path(out) if out else environment.default_run_dir(backend.name))
    cases = runner.list_cases(specs, book, suite, backend, dtypes)
    jobs = jobs or parallel.default_jobs(backend, sum(c.status is None for c in cases))
    print(f"gems-perf: vendor {backend.name} ({selection.selected_because()}), device {backend.device}"
          + (f" (indices {', '.join(map(str, chosen))})" if chosen else "") + f", {suite} suite, results to {out}",
          file=sys.stderr, flush=True)

    limit = f"the time limit (--time-limit {time_limit:g} s)" if time_limit else ""
    deadline = started + time_limit if time_limit else None
    stop = parallel.stopper(deadline, limit)
    job = parallel.Job(backend, specs, dtypes, suite, book, size)
    notes = [f"Only the {size} shapes of the suite (--size {size}), and the operators that have such shapes."
             ] if size else []
    if jobs > 1:
        native.load(backend.device)  # built (first use: ~30 s) here, once, rather than by every worker at once
        done = parallel.precompile(job, cases, jobs, chosen, deadline, limit, progress)
        notes.append(f"Kernels compiled before timing ({done.line()}): first_call_ms is then a first call with "
                     f"Triton's cache warm.")
        if done.stopped_by == "Ctrl-C":  # nothing is timed; the (empty) run is written, as after any Ctrl-C
            chosen, stop = chosen and chosen[:1], _after_ctrl_c
    if chosen and len(chosen) > 1:
        run = parallel.measure_on_devices(job, cases, chosen, plan, deadline, limit, progress)
    else:
        if chosen:
            parallel.use_device(backend.device, chosen[0])
        run = runner.measure(specs, book, suite, backend, dtypes, plan, progress, stop=stop)
    run.notes += notes
    run.out = out
    run.written = report.write_all(run, out)
    return run
