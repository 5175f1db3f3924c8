"""The perf runner: cases from the operator declarations, checked, then timed against ATen.

A case is (operator, dtype, shape). For each one the runner builds the declaration's perf inputs,
runs ATen (inside ``gems.aten_only()``) and gems (registered) once, checks the gems result against
ATen's and that the gems kernel really ran, and only then times both providers alternately (ATen with
the gems kernels unregistered, so that it pays nothing for their wrapper). Whatever
goes wrong in one case (no perf declaration, a dtype the vendor lacks, out of memory, an exception)
becomes that case's status and reason; the run goes on.
"""

from __future__ import annotations

import contextlib
import difflib
import gc
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch

import gems
from gems.perf import check, shapes, timing
from gems.perf.progress import Progress
from gems.perf.results import STATUSES, row_speedup
from gems.report import environment
from gems.runtime import registration
from gems.spec import OpSpec
from gems.testing.cases import dtype_name
from gems.testing.conformance import expected_overloads

# A device where ATen has no kernels (the simulated one): there is nothing to compare speed with.
NO_ATEN = "ATen has no kernels on this device: gems timed alone, no speedup"
_REASON_CHARS = 300


class PerfError(ValueError):
    """The run cannot start (bad option, unwritable --out, bad shapes file); the message says why."""


@dataclass(frozen=True)
class PerfCase:
    spec: OpSpec
    dtype: torch.dtype
    shape: shapes.Shape | None = None
    status: str | None = None  # set when the case is recorded without running (unsupported, no-perf)
    reason: str = ""

    @property
    def label(self) -> str:
        return f"{self.spec.name} {dtype_name(self.dtype)} {self.shape.text if self.shape else '-'}"


@dataclass
class PerfRun:
    """What one run measured: the environment, one row per case, the copy bandwidth, where it went."""

    env: dict
    suite: str
    rows: list[dict]
    copy_gbps: float | None
    plan: timing.TimingPlan
    out: Path | None = None
    written: list[Path] = field(default_factory=list)
    interrupted: int | None = None  # stopped early: the number of cases that were to run (rows holds the finished)
    stopped_by: str = ""  # what stopped it: "Ctrl-C", or the time limit
    devices: tuple = ()  # the device indices whose shards were merged into this run (empty: one process)
    notes: list = field(default_factory=list)  # how the run was made (precompile workers), for the summary

    def counts(self) -> dict:
        return {s: sum(r["status"] == s for r in self.rows) for s in STATUSES}


# ---------------------------------------------------------------- choosing what to run

def select_specs(names=None, specs=None) -> tuple[OpSpec, ...]:
    """The declarations named in ``names`` (all when None); unknown names raise with suggestions."""
    from gems import ops  # after the vendor is chosen: importing op modules defines kernels

    specs = tuple(specs if specs is not None else ops.all_specs())
    if not names:
        return specs
    wanted = [n.strip() for n in (names.split(",") if isinstance(names, str) else names) if n.strip()]
    known = [s.name for s in specs]
    unknown = [n for n in wanted if n not in known]
    if unknown:
        hints = []
        for name in unknown:
            close = difflib.get_close_matches(name, known, n=3)
            hints.append(f"{name!r}" + (f" (did you mean {', '.join(close)}?)" if close else ""))
        raise PerfError(f"unknown operator(s) {', '.join(hints)}; known: {', '.join(known)}")
    return tuple(s for s in specs if s.name in wanted)


def parse_dtypes(names) -> tuple | None:
    if not names:
        return None
    chosen = []
    for name in (n.strip() for n in (names.split(",") if isinstance(names, str) else names)):
        if isinstance(name, torch.dtype):
            chosen.append(name)
        elif name in shapes.DTYPES:
            chosen.append(shapes.DTYPES[name])
        elif name:
            raise PerfError(f"unknown dtype {name!r}; known: {', '.join(shapes.DTYPES)}")
    return tuple(chosen)


def with_shapes(specs, book: shapes.ShapeBook, suite: str) -> list:
    """The operators with shapes in ``suite``. The models suite without --ops, and a run of one size class
    (--size), run these alone: the operators without such shapes are left out rather than listed as no-perf rows
    (an explicit --ops lists them in the models suite, with the reason)."""
    return [s for s in specs if s.perf is not None and book.shapes(s.perf.shapes, suite) is not None]


def list_cases(specs, book: shapes.ShapeBook, suite: str, backend, dtypes=None) -> list[PerfCase]:
    """Every (operator, dtype, shape) of the suite, and a recorded case for each that cannot run."""
    cases = []
    unused = set(backend.unused_ops()) if hasattr(backend, "unused_ops") else set()
    for spec in specs:
        left_to_aten = _left_to_aten(spec, unused)
        if dtypes:
            chosen = list(dtypes)
        else:
            chosen = [d for d in book.default_dtypes(suite) if d in spec.dtypes] or list(spec.dtypes[:1])
        for dtype in chosen:
            if dtype not in spec.dtypes:
                cases.append(PerfCase(spec, dtype, status="unsupported",
                                      reason=f"{spec.name} does not declare {dtype_name(dtype)}"))
            elif not backend.capabilities.supports(dtype):
                cases.append(PerfCase(spec, dtype, status="unsupported",
                                      reason=f"vendor {backend.name} does not support {dtype_name(dtype)}"))
            elif left_to_aten:
                cases.append(PerfCase(spec, dtype, status="fallback", reason=left_to_aten))
            elif spec.perf is None:
                cases.append(PerfCase(spec, dtype, status="no-perf",
                                      reason=f"{spec.name} declares no perf inputs (OpSpec.perf is None)"))
            elif book.shapes(spec.perf.shapes, suite) is None:
                cases.append(PerfCase(spec, dtype, status="no-perf", reason=book.why_missing(spec.perf.shapes, suite)))
            else:
                cases += [PerfCase(spec, dtype, shape) for shape in book.shapes(spec.perf.shapes, suite)]
    return cases


def _left_to_aten(spec: OpSpec, unused: set) -> str:
    """Why the vendor does not register this operator's main overload ("" when it does)."""
    overload = spec.overloads[0]
    for name in (overload, overload.split(".")[0], spec.name):
        if name in unused:
            return f"{name!r} is listed in the vendor's get_unused_ops(): ATen runs it"
    return ""


def check_out_dir(out: Path) -> Path:
    """Create ``out`` and prove it writable before any benchmark starts."""
    out = Path(out)
    probe = out / ".gems-perf-write-test"
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise PerfError(f"--out {out}: not a writable directory ({exc.strerror or exc}); "
                        f"choose another folder with --out DIR") from exc
    return out


# ---------------------------------------------------------------- one case

def _empty_row(case: PerfCase) -> dict:
    return {
        "op": case.spec.name, "family": case.spec.family, "dtype": dtype_name(case.dtype),
        "shape": case.shape.text if case.shape else "", "size_class": case.shape.size_class if case.shape else "",
        "status": case.status or "", "reason": case.reason,
        "aten_ms": None, "gems_ms": None, "aten_p20_ms": None, "aten_p80_ms": None, "gems_p20_ms": None,
        "gems_p80_ms": None, "speedup": None, "gbps": None, "tflops": None, "pct_copy_bw": None,
        "aten_percall_us": None, "gems_percall_us": None, "percall_ratio": None, "first_call_ms": None,
        "native_pct": None,
    }


def _is_oom(exc: BaseException) -> bool:
    return isinstance(exc, (torch.OutOfMemoryError, MemoryError)) or "out of memory" in str(exc).lower()


def release_memory(device: str, collect: bool) -> None:
    """Give the case's memory back before the next one (a traceback's reference cycles need a collection)."""
    if collect:
        gc.collect()
    empty_cache = getattr(getattr(torch, device, None), "empty_cache", None)
    if device != "cpu" and empty_cache is not None:
        empty_cache()


def _counts(spec: OpSpec):
    return dict(registration.gems_calls), {k: v for k, v in registration.fallback_calls.items()
                                           if k[0] in spec.overloads}


def _not_run(spec: OpSpec, sample, before) -> str | None:
    """Why the gems kernel did not serve the calls since ``before`` (None when it did, every time)."""
    gems_before, fallback_before = before
    fallbacks = [f"{overload}: {why}" for (overload, why), n in registration.fallback_calls.items()
                 if overload in spec.overloads and n > fallback_before.get((overload, why), 0)]
    ran = lambda o: registration.gems_calls[o] > gems_before.get(o, 0)
    if sample.expects is not None:  # the sample names the overload that must run
        missing = [o for o in expected_overloads(spec, sample) if not ran(o)]
    else:  # any of the operator's overloads (torch.sum(x, -1) reaches sum.dim_IntList, not sum)
        missing = [] if any(ran(o) for o in spec.overloads) else list(spec.overloads)
    if not fallbacks and not missing:
        return None
    deliberate = spec.deliberate_fallbacks.get(sample.variant)
    why = "; ".join(fallbacks) or f"the gems kernel for {', '.join(missing)} was not called (ATen ran)"
    return f"deliberate ATen fallback: {deliberate}" if deliberate else f"fell back to ATen: {why}"


@contextlib.contextmanager
def gems_off(dispatch_key: str):
    """Unregister every gems kernel for the block, then restore them.

    ATen is timed this way rather than inside ``aten_only()``: there a call still passes through the
    gems wrapper (dispatcher -> Python -> boxed ATen kernel), a few microseconds that would be charged
    to ATen's per-call time. Entered once per batch of calls, outside the timed region.
    """
    table = registration.snapshot()
    registration.apply({}, None)
    try:
        yield
    finally:
        registration.apply(table, dispatch_key)


def run_case(case: PerfCase, backend, timer, overrides: dict) -> dict:
    """One row: measured, or the status and reason that stopped it."""
    row = _empty_row(case)
    if case.status:
        return row
    failed = False
    try:
        _measure(case, backend, timer, overrides, row)
    except NoAtenKernel as exc:  # gems may compute it (angle of fp16), but there is no ATen time to compare with
        row["status"] = "unsupported"
        row["reason"] = f"ATen has no kernel for it on this device: nothing to time against ({exc})"[:_REASON_CHARS]
    except Exception as exc:  # a failing case is a result, not the end of the run
        failed = True
        row["status"] = "oom" if _is_oom(exc) else "error"
        row["reason"] = f"{type(exc).__name__}: {exc}".replace("\n", " ")[:_REASON_CHARS]
        for key in ("speedup", "gbps", "tflops", "pct_copy_bw"):
            row[key] = None
    release_memory(backend.device, collect=failed)  # after the except block, which held the traceback
    return row


class NoAtenKernel(Exception):
    """ATen has no kernel for the case's call on this device (its NotImplementedError: angle of fp16 on CUDA)."""


def prepare_case(case: PerfCase, backend):
    """(sample, gems call, ATen call, ATen's answer) of a case: inputs seeded by the case's label, ATen run once
    (its answer and warm-up; None on a device without ATen kernels). The precompile workers make the same calls.
    Raises NoAtenKernel where ATen has no kernel for the call."""
    spec = case.spec
    torch.manual_seed(zlib.crc32(case.label.encode()))
    with registration.aten_only():
        sample = spec.perf.inputs(case.shape.dims, case.dtype, backend.device).built()
        call, args, kwargs = sample.call or spec.call, sample.args, sample.kwargs
        fn = lambda: call(*args, **kwargs)
        # An API operator (gems.fused) is timed against its eager PyTorch composite.
        aten_fn = (lambda: spec.reference(*args, **kwargs)) if spec.reference is not None else fn
        try:
            aten_result = aten_fn() if backend.capabilities.aten_kernels else None
        except NotImplementedError as exc:
            raise NoAtenKernel(f"{exc}".replace("\n", " ")) from exc
    return sample, fn, aten_fn, aten_result


def _measure(case: PerfCase, backend, timer, overrides: dict, row: dict) -> None:
    spec, perf, device = case.spec, case.spec.perf, backend.device
    aten_here = backend.capabilities.aten_kernels  # False on the simulated device: gems is timed alone
    sample, fn, aten_fn, aten_result = prepare_case(case, backend)
    before = _counts(spec)
    gems_result, row["first_call_ms"] = timing.first_call(fn, device)
    passed, how = check.check(spec, sample, gems_result, aten_result, overrides)
    if not passed:
        gap = backend.device_gap(spec.name, sample.variant, case.dtype)
        if gap:  # declared by the vendor, as in conformance: reported, not timed, not a failure of the run
            row["status"], row["reason"] = "unsupported", f"device gap ({gap}): {how}"
            return
        known = spec.known_failure(backend.name, case.dtype, sample.variant)
        row["status"], row["reason"] = "mismatch", (f"known failure ({known}): " if known else "") + how
        return
    why = _not_run(spec, sample, before)
    if why:
        row["status"], row["reason"] = "fallback", why
        return
    nbytes = perf.bytes(sample, gems_result) if perf.bytes else None
    flops = perf.flops(sample, gems_result) if perf.flops else None
    del aten_result, gems_result

    providers = [timing.Provider("aten", aten_fn, lambda: gems_off(backend.dispatch_key))] if aten_here else []
    providers.append(timing.Provider("gems", fn))
    before, replayed = _counts(spec), check.replays(spec)
    kernel = timing.kernel_times(timer, providers)
    percall = timing.per_call_times(device, timer.plan, providers) if case.shape.size_class == "small" else None
    why = _not_run(spec, sample, before)
    if why:  # the first call ran gems but a timed one did not: the timings would be ATen's
        row["status"], row["reason"] = "fallback", f"while timing: {why}"
        return

    mine = kernel["gems"]
    row.update(gems_ms=mine.median, gems_p20_ms=mine.p20, gems_p80_ms=mine.p80,
               native_pct=check.native_pct(spec, before[0], replayed))
    if aten_here:
        aten = kernel["aten"]
        row.update(aten_ms=aten.median, aten_p20_ms=aten.p20, aten_p80_ms=aten.p80, speedup=aten.median / mine.median)
    if nbytes:
        row["gbps"] = nbytes / (mine.median * 1e-3) / 1e9
    if flops:
        row["tflops"] = flops / (mine.median * 1e-3) / 1e12
    if percall:
        row["gems_percall_us"] = percall["gems"].median
        if aten_here:
            row.update(aten_percall_us=percall["aten"].median, percall_ratio=percall["gems"].median
                       / percall["aten"].median)
    row["status"], row["reason"] = "ok", how if aten_here else f"{how}; {NO_ATEN}"


# ---------------------------------------------------------------- a whole run

# Above the copy ceiling a memory-bound figure is physically impossible: the bytes formula counts data
# the kernel did not move (a no-op, a view). 5% covers the spread of two medians.
IMPOSSIBLE_PCT_OF_COPY = 105.0


def _share_of_copy(row: dict, copy_gbps: float) -> None:
    """pct_copy_bw for the row, or, when that is impossible, no bandwidth and a reason that says why."""
    pct = 100.0 * row["gbps"] / copy_gbps
    if pct <= IMPOSSIBLE_PCT_OF_COPY:
        row["pct_copy_bw"] = pct
        return
    row["reason"] = (f"bandwidth not reported: {row['gbps']:.4g} GB/s would be {pct:.3g}% of the copy ceiling "
                     f"({copy_gbps:.4g} GB/s), so the bytes formula counts data the kernel does not move")
    row["gbps"] = None


def _registered(specs, cases):
    """Register gems for the operators that have cases to time (as a user's gems.enable() would)."""
    from gems import ops

    known = set(ops.names())
    # An API operator (gems.fused) registers nothing: its functions run gems kernels whenever called.
    # A composite operator (quantile) registers the overloads it decomposes into.
    names = sorted({name for c in cases if c.status is None and c.spec.name in known
                    for name in (c.spec.composite_of or ((c.spec.name,) if c.spec.impls else ()))})
    return gems.use_gems(include=names) if names else contextlib.nullcontext()


@contextlib.contextmanager
def _single_threaded_cpu(device: str):
    """On CPU, ATen runs on one thread, as the interpreter does: on a shared CI machine, OpenMP threads
    competing for cores made a 4K-element torch.exp take 4.4 ms instead of 5 us (2 cores, load 4)."""
    if device != "cpu":
        yield
        return
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def measure(specs, book: shapes.ShapeBook, suite: str, backend, dtypes=None, plan=None, progress=True,
            register=None, shard: tuple[int, int] | None = None, stop: Callable[[], str] | None = None,
            label: str = "") -> PerfRun:
    """Time every case of ``specs`` in ``suite`` on the selected vendor; no files are written.

    register: a context manager factory that registers the gems kernels (default: gems.use_gems for
    the operators of the whole run). shard (k, n): only every n-th case from the k-th (one device's share).
    stop: asked before each case; a reason it gives ("the time limit") ends the run there, as Ctrl-C does.
    label: printed before each progress line (which device's shard).
    """
    plan = plan or timing.plan_for(backend.device, suite == "quick")
    timer = timing.make_timer(backend.device, plan)
    overrides = check.load_overrides(backend)
    everything = list_cases(specs, book, suite, backend, dtypes)
    cases = everything[shard[0]::shard[1]] if shard else everything
    env = environment.environment(backend)
    env.update(timer=timer.name, flush=timer.flush)
    bar = Progress(len(cases), enabled=progress, label=label)
    rows = []
    copy_gbps = None
    stopped_by = ""
    # Registered as for the whole run, shard or not: which kernels an operator reaches must not depend on the shard.
    with (register() if register else _registered(specs, everything)), _single_threaded_cpu(backend.device):
        if any(c.status is None for c in cases):
            try:
                copy_gbps = timing.copy_bandwidth(backend.device, timer, lambda: gems_off(backend.dispatch_key))
                bar.note(f"copy bandwidth: {copy_gbps:.1f} GB/s ({timer.name})")
            except Exception as exc:  # the operators can still be timed; pct_copy_bw stays empty
                bar.note(f"copy bandwidth not measured: {type(exc).__name__}: {exc}")
            release_memory(backend.device, collect=copy_gbps is None)
        interrupted = None
        try:
            for case in cases:
                stopped_by = stop() if stop else ""
                if stopped_by:
                    interrupted = len(cases)
                    break
                bar.start(case.label)
                row = run_case(case, backend, timer, overrides)
                if row["gbps"] and copy_gbps:
                    _share_of_copy(row, copy_gbps)
                rows.append(row)
                bar.done(_outcome(row))
        except KeyboardInterrupt:  # the finished cases are kept and written; the one in flight is dropped
            interrupted, stopped_by = len(cases), "Ctrl-C"
    bar.close()
    return PerfRun(env=env, suite=suite, rows=with_env(rows, env, suite), copy_gbps=copy_gbps, plan=plan,
                   interrupted=interrupted, stopped_by=stopped_by)


def with_env(rows, env: dict, suite: str) -> list[dict]:
    """The rows as perf.csv has them: the environment's columns and the suite first."""
    keys = ("vendor", "device", "driver", "torch", "triton", "date", "timer", "flush", "commit")
    return [{**{k: env.get(k) for k in keys}, "suite": suite, **row} for row in rows]


def failed_row(case: PerfCase, reason: str) -> dict:
    """The row of a case whose process failed before measuring it: an error, unless the case was recorded
    without running (unsupported, no-perf, left to ATen), which it stays."""
    row = _empty_row(case)
    if not case.status:
        row["status"], row["reason"] = "error", reason[:_REASON_CHARS]
    return row


def _outcome(row: dict) -> str:
    speedup = row_speedup(row)
    return f"{row['status']} {speedup:.3g}x" if speedup else row["status"]
