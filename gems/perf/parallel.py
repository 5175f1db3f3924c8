"""gems-perf in several processes (issue #27): precompile workers that fill Triton's cache before the timing
starts, and timing shards, one process per device, whose rows merge into one run.

The first call of a case compiles its kernels (Triton; for an autotuned kernel every config it tries): 1.2 to
2.9 s per case on an H200 machine (perf.csv's first_call_ms), where timing it takes well under a second. That is
CPU work. Precompile workers (``--jobs N``) make the first call of every case, N at a time, before anything is
timed; the timing process then finds Triton's on-disk cache warm and times exactly as it would have. Workers
tune nothing (gems/ops/blas/tuning.py's compile_only): timings taken while other workers share the GPU would
pick, and remember, the wrong configs, so the timing process tunes on a quiet GPU from compiled kernels.

Children start with ``spawn`` (a process that has used CUDA cannot fork) and rebuild the run from a :class:`Job`
(names: declarations cannot be pickled). They ignore SIGINT and SIGTERM: Ctrl-C, ``timeout`` and the time limit
reach them through the parent, which asks them to stop between cases, so that a shard always hands back the cases
it finished. A child whose parent is gone stops at its next case as well.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import signal
import time
import warnings
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field

import torch

from gems.perf import runner, shapes, timing
from gems.perf.progress import Progress, quiet_warnings
from gems.runtime import selection
from gems.testing.cases import dtype_name

# Each worker holds an interpreter, torch, gems and a device context (on a GPU, roughly a gigabyte of host memory
# and a few hundred megabytes of device memory: an estimate, not measured): more only adds memory.
MAX_JOBS = 32
# A worker costs seconds to start (torch, gems, a device context); a case's compile, one to three. Fewer than this
# many cases per worker and the default runs no workers, or fewer (an explicit --jobs is taken as given).
CASES_PER_JOB = 4
_CHILD_ERROR_CHARS = 300


class Job:
    """What a child process needs to list the parent's cases: the vendor, operator and dtype names, suite and
    shapes file (names, not declarations, which cannot be pickled)."""

    def __init__(self, backend, specs, dtypes, suite: str, book: shapes.ShapeBook, size: str | None = None):
        self.vendor, self.suite, self.shapes_file, self.size = backend.name, suite, str(book.path), size
        self.ops = tuple(s.name for s in specs)
        self.dtypes = tuple(dtype_name(d) for d in dtypes) if dtypes else None

    def load(self):
        """(backend, specs, book, dtypes) in this process, the vendor selected first (it defines the kernels); the
        book cut to the run's size class (--size) as the parent's is."""
        backend = selection.select(self.vendor, why="the gems-perf process that started this one")
        book = shapes.load(self.shapes_file)
        return (backend, runner.select_specs(self.ops), book.of_size(self.size) if self.size else book,
                runner.parse_dtypes(self.dtypes))


def default_jobs(backend, runnable: int) -> int:
    """Precompile workers when --jobs is not given: one per CPU core this process may use, on a device that
    compiles; none (1: the timing process compiles as it goes) where kernels are interpreted."""
    if backend.device == "cpu" or timing.interpreted():
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    jobs = min(cores, MAX_JOBS, runnable // CASES_PER_JOB)
    return jobs if jobs >= 2 else 1


def stopper(deadline: float | None, limit: str, event=None, parent: int | None = None):
    """stop() for :func:`runner.measure`: "Ctrl-C" once ``event`` is set, ``limit`` once ``deadline`` (time.time())
    has passed, a reason once the ``parent`` process is gone, else ""."""
    def stop() -> str:
        if event is not None and event.is_set():
            return "Ctrl-C"
        if parent is not None and os.getppid() != parent:
            return "the end of the gems-perf process that started it"
        return limit if deadline is not None and time.time() >= deadline else ""
    return stop


def _child_signals() -> None:
    """In a child: Ctrl-C and SIGTERM (a terminal's or ``timeout``'s, sent to the whole process group) are the
    parent's to handle; it tells the children to stop (module docstring)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


# ---------------------------------------------------------------- devices

def _device_module(device: str):
    module = getattr(torch, device, None)
    if module is None or not hasattr(module, "device_count"):
        raise runner.PerfError(f"--devices: torch has no module for device type {device!r} to count its devices")
    return module


def device_count(device: str) -> int:
    return 1 if device == "cpu" else _device_module(device).device_count()


def parse_devices(text: str | None, backend) -> tuple[int, ...] | None:
    """The device indices of ``--devices 0,1``, checked: present, each once, all of one kind."""
    if not text:
        return None
    try:
        indices = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise runner.PerfError(f"--devices {text!r}: give device indices separated by commas, e.g. --devices 0,1"
                               ) from None
    repeated = sorted({i for i in indices if indices.count(i) > 1})
    if repeated:
        raise runner.PerfError(f"--devices {text}: device {repeated[0]} is named twice; two shards timed on one "
                               f"device would contend for it")
    count = device_count(backend.device)
    missing = [i for i in indices if not 0 <= i < count]
    if missing:
        present = "none" if not count else "0" if count == 1 else f"0 to {count - 1}"
        raise runner.PerfError(f"--devices {text}: there is no {backend.device} device {missing[0]} here (vendor "
                               f"{backend.name}'s devices: {present})")
    module = getattr(torch, backend.device, None)
    if len(indices) > 1 and hasattr(module, "get_device_name"):
        names = {i: module.get_device_name(i) for i in indices}
        if len(set(names.values())) > 1:
            found = ", ".join(f"{i}: {n}" for i, n in names.items())
            raise runner.PerfError(f"--devices {text}: the devices differ ({found}); one run times one kind of "
                                   f"device: run each kind separately")
    return indices


def use_device(device: str, index: int) -> None:
    """Make ``index`` this process's current device of type ``device``: tensors made on ``device`` go there."""
    if device == "cpu":
        return
    accelerator = getattr(torch, "accelerator", None)
    current = accelerator.current_accelerator() if accelerator is not None else None
    if current is not None and current.type == device:
        accelerator.set_device_index(index)
    else:
        _device_module(device).set_device(index)


# ---------------------------------------------------------------- precompile workers

@dataclass
class Precompiled:
    """What the precompile workers did."""

    workers: int
    cases: int  # the cases given to them: those that run (not unsupported, no-perf or left to ATen)
    warmed: int = 0
    failed: list = field(default_factory=list)  # (case label, why): the timing process meets these again
    pids: set = field(default_factory=set)
    seconds: float = 0.0
    stopped_by: str = ""  # Ctrl-C, the time limit, or a worker that died: the rest compile when timed

    def line(self) -> str:
        text = (f"precompile: first calls of {self.warmed} of {self.cases} cases made by {len(self.pids)} worker "
                f"processes in {self.seconds:.0f} s")
        if self.failed:
            text += f"; {len(self.failed)} failed there (timing records why), e.g. {self.failed[0][0]}: " \
                    f"{self.failed[0][1][:120]}"
        return text + (f"; stopped by {self.stopped_by}" if self.stopped_by else "")


_worker = None  # in a precompile worker: (backend, cases, stop(), registration context)


def _start_worker(job: Job, devices, counter, stop, deadline, limit, parent) -> None:
    global _worker
    _child_signals()
    warnings.simplefilter("ignore")  # the timing process meets every problem again and reports it
    with counter.get_lock():
        number = counter.value
        counter.value += 1
    backend, specs, book, dtypes = job.load()
    if devices:
        use_device(backend.device, devices[number % len(devices)])
    from gems.ops.blas import tuning  # after the vendor: importing gems.ops defines the kernels

    tuning.compile_only()
    torch.set_num_threads(1)  # a core per worker
    cases = runner.list_cases(specs, book, job.suite, backend, dtypes)
    registered = runner._registered(specs, cases)  # as the timing process registers them: the same kernels run
    registered.__enter__()  # for the worker's life; kept referenced below, so that nothing unregisters it
    _worker = (backend, cases, stopper(deadline, limit, stop, parent), registered)


def _first_call(case, backend) -> None:
    _, fn, _, _ = runner.prepare_case(case, backend)
    timing.first_call(fn, backend.device)


def _warm(index: int) -> tuple[int, str | None]:
    """(pid, None) when the case was not started (told to stop), else (pid, "" or why its first call failed)."""
    backend, cases, stop, _ = _worker
    if stop():
        return os.getpid(), None
    why = ""
    try:
        _first_call(cases[index], backend)
    except runner.NoAtenKernel:  # not timed at all: nothing to compile for it
        pass
    except Exception as exc:  # recorded by the timing process, which runs the case again
        why = f"{type(exc).__name__}: {exc}".replace("\n", " ")[:_CHILD_ERROR_CHARS]
    runner.release_memory(backend.device, collect=bool(why))
    return os.getpid(), why


def _order(cases) -> list[int]:
    """The indices of the cases that run, the first shape of each (operator, dtype) first: its kernels compile in
    one worker before the other shapes, which mostly find them compiled, spread over the others."""
    first, rest, seen = [], [], set()
    for index, case in enumerate(cases):
        if case.status is None:
            key = (case.spec.name, case.dtype)
            (rest if key in seen else first).append(index)
            seen.add(key)
    return first + rest


def precompile(job: Job, cases, jobs: int, devices, deadline: float | None, limit: str,
               progress: bool = True) -> Precompiled:
    """The first call of every case that runs, in ``jobs`` worker processes (spread over ``devices``), so that
    Triton's cache is warm for the timing. Best effort: a case that fails or a worker that dies leaves its
    compiles to the timing process, which records whatever goes wrong as it does without workers."""
    order = _order(cases)
    done = Precompiled(workers=min(jobs, len(order)), cases=len(order))
    if not order:
        return done
    context = multiprocessing.get_context("spawn")
    stop = context.Event()
    bar = Progress(len(order), enabled=progress, every=max(1, len(order) // 20))
    bar.note(f"precompile: the first call of {len(order)} cases in {done.workers} worker processes, before timing")
    started = time.perf_counter()
    pool = ProcessPoolExecutor(done.workers, mp_context=context, initializer=_start_worker,
                               initargs=(job, devices, context.Value("i", 0), stop, deadline, limit, os.getpid()))
    try:
        futures = {pool.submit(_warm, index): cases[index].label for index in order}
        for future in as_completed(futures):
            bar.start(f"first call {futures[future]}")
            pid, why = future.result()
            done.pids.add(pid)
            if why is None:
                done.stopped_by = done.stopped_by or limit
            elif why:
                done.failed.append((futures[future], why))
            else:
                done.warmed += 1
            bar.done("not started" if why is None else "failed" if why else "done")
    except KeyboardInterrupt:
        stop.set()  # the workers finish the case in hand; the rest are cancelled
        done.stopped_by = "Ctrl-C"
    except BrokenProcessPool as exc:
        done.stopped_by = f"a worker that died ({exc})"
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        bar.close()
    done.seconds = time.perf_counter() - started
    bar.note(done.line())
    return done


# ---------------------------------------------------------------- timing shards, one per device

def _time_shard(job: Job, device: int, shard: tuple[int, int], plan, deadline, limit, progress, stop, results,
                parent: int):
    """A shard's process: its cases timed on its device; (shard, PerfRun) or (shard, why it failed) on results."""
    _child_signals()
    quiet_warnings()
    try:
        backend, specs, book, dtypes = job.load()
        use_device(backend.device, device)
        outcome = runner.measure(specs, book, job.suite, backend, dtypes, plan, progress, shard=shard,
                                 stop=stopper(deadline, limit, stop, parent), label=f"device {device}: ")
    except Exception as exc:  # reported by the parent as its cases' error
        outcome = f"{type(exc).__name__}: {exc}".replace("\n", " ")[:_CHILD_ERROR_CHARS]
    if os.getppid() != parent:  # nobody reads the queue: exit without waiting for the rows to be read
        results.cancel_join_thread()
    results.put((shard[0], outcome))


def _collect(processes, results, stop) -> dict:
    """{shard: PerfRun or why it failed}, waiting for every shard; Ctrl-C asks them to stop after their case."""
    outcomes, silent = {}, set()
    while len(outcomes) < len(processes):
        try:
            shard, outcome = results.get(timeout=2.0)
            outcomes[shard] = outcome
        except queue.Empty:  # a shard that exited with nothing sent died (twice silent: its result is not in transit)
            for shard, process in enumerate(processes):
                if shard not in outcomes and process.exitcode is not None:
                    if shard in silent:
                        outcomes[shard] = f"its process died (exit code {process.exitcode})"
                    silent.add(shard)
        except KeyboardInterrupt:
            stop.set()
    return outcomes


def measure_on_devices(job: Job, cases, devices, plan, deadline, limit: str, progress: bool = True) -> runner.PerfRun:
    """Every case timed once: shard k (every n-th case from the k-th) in its own process on ``devices[k]``, all at
    once; the rows merged in the order of ``cases``."""
    context = multiprocessing.get_context("spawn")
    stop, results = context.Event(), context.Queue()
    processes = [context.Process(target=_time_shard, name=f"gems-perf-device-{device}", args=(
        job, device, (k, len(devices)), plan, deadline, limit, progress, stop, results, os.getpid()))
                 for k, device in enumerate(devices)]
    for process in processes:
        process.start()
    outcomes = _collect(processes, results, stop)
    for process in processes:
        process.join()
    return merge(outcomes, cases, devices)


def merge(outcomes: dict, cases, devices) -> runner.PerfRun:
    """One run from the shards' runs: rows in case order, a failed shard's cases as errors with its reason."""
    runs = {k: o for k, o in outcomes.items() if isinstance(o, runner.PerfRun)}
    if not runs:
        raise runner.PerfError("no device's shard ran: " + "; ".join(f"device {devices[k]}: {o}"
                                                                      for k, o in sorted(outcomes.items())))
    first = runs[min(runs)]
    n = len(devices)
    rows_of = {}
    for k, outcome in outcomes.items():
        if k in runs:
            rows_of[k] = runs[k].rows
        else:
            failed = [runner.failed_row(case, f"the shard on device {devices[k]} failed: {outcome}")
                      for case in cases[k::n]]
            rows_of[k] = runner.with_env(failed, first.env, first.suite)
    rows = [rows_of[i % n][i // n] for i in range(len(cases)) if i // n < len(rows_of[i % n])]
    copies = [r.copy_gbps for r in runs.values() if r.copy_gbps]
    stopped = [r.stopped_by for r in runs.values() if r.stopped_by]
    return runner.PerfRun(env=first.env, suite=first.suite, rows=rows,
                          copy_gbps=sum(copies) / len(copies) if copies else None, plan=first.plan,
                          interrupted=len(cases) if stopped else None, stopped_by=stopped[0] if stopped else "",
                          devices=tuple(devices))
