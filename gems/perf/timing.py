"""Timers: kernel time (do_bench with L2 flush, or the wall clock where the device has no timing events),
per-call time, copy bandwidth.

Every measurement alternates the providers, A B A B ..., for several rounds in one process, so clock
and thermal drift hit ATen and gems alike. Warm-up and compilation happen before the first round.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch


@dataclass(frozen=True)
class Provider:
    """One side of a comparison: a zero-argument closure built outside the timed region, and the
    context it runs in (entered once around a batch of calls, so it costs nothing per call)."""

    name: str
    fn: Callable
    context: Callable = contextlib.nullcontext


@dataclass(frozen=True)
class TimingPlan:
    rounds: int = 3  # alternating rounds of kernel timing
    warmup_ms: float = 10.0  # do_bench warm-up per round
    rep_ms: float = 50.0  # do_bench measuring time per round
    wall_reps: int = 3  # wall-clock timer: calls timed one by one per round
    percall_rounds: int = 15  # alternating rounds of back-to-back timing
    percall_target_ms: float = 7.0  # length of one back-to-back batch
    percall_min_calls: int = 20
    percall_max_calls: int = 5000
    copy_bytes: int = 256 << 20  # buffer copied to measure the copy bandwidth


# A GPU: a 4K-element op costs ~10 us per call, so 7 ms batches hold ~700 calls. Host time drifts by tens of
# percent within seconds on a shared host (one case's ATen and gems per-call times moved together by 0.7-1.4x
# between two runs on one H200, and a single side by 1.4x in one run at 5 rounds of 20 ms): 15 short
# alternating rounds give the median more samples to stand on for the same ~0.2 s per case.
DEVICE_PLAN = TimingPlan()
# The interpreter: ~5-20 ms per call; the numbers only show that the pipeline works, so one round (A then B) of
# each timer: CI's quick run of every operator took 261 s at two rounds (2026-11-26, this repository's CI machine).
INTERPRETER_PLAN = TimingPlan(rounds=1, wall_reps=1, percall_rounds=1, percall_target_ms=0.0, percall_min_calls=2,
                              percall_max_calls=2, copy_bytes=16 << 20)


def interpreted() -> bool:
    """Kernels run in Triton's interpreter (the interpreter vendor, and the simulated device built on it)."""
    import triton

    return bool(triton.knobs.runtime.interpret)


def plan_for(device: str, quick: bool) -> TimingPlan:
    if device == "cpu" or interpreted():
        return INTERPRETER_PLAN
    return TimingPlan(rounds=2, rep_ms=25.0, percall_rounds=3, percall_target_ms=10.0) if quick else DEVICE_PLAN


def synchronizer(device: str) -> Callable[[], None]:
    """A function that waits for the device's queued work: ``torch.accelerator`` when the device is the
    current accelerator, else its device module's ``synchronize`` (``torch.<device>``); nothing on the CPU."""
    if device == "cpu":
        return lambda: None
    accelerator = getattr(torch, "accelerator", None)
    current = accelerator.current_accelerator() if accelerator is not None else None
    if current is not None and current.type == device:
        return accelerator.synchronize
    sync = getattr(getattr(torch, device, None), "synchronize", None)
    if sync is None:
        raise RuntimeError(f"device {device!r} is not torch's current accelerator and torch.{device} has no "
                           f"synchronize(): its timings could not be trusted")
    return sync


def has_timing_events(device: str) -> bool:
    """Can ``torch.Event`` time work on this device? (The CPU, the interpreter and the simulated device: no.)"""
    if device == "cpu" or interpreted():
        return False
    try:
        start, end = torch.Event(device=device, enable_timing=True), torch.Event(device=device, enable_timing=True)
        start.record()
        end.record()
        end.synchronize()
        start.elapsed_time(end)
    except (RuntimeError, ValueError, NotImplementedError, AttributeError):
        return False
    return True


def quantile(values, q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    ordered = sorted(values)
    if not ordered:
        return math.nan
    position = (len(ordered) - 1) * q
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


@dataclass(frozen=True)
class Stats:
    median: float
    p20: float
    p80: float
    n: int

    @classmethod
    def of(cls, values) -> Stats:
        return cls(quantile(values, 0.5), quantile(values, 0.2), quantile(values, 0.8), len(values))


@dataclass
class DoBenchTimer:
    """triton.testing.do_bench: CUDA-style events around each call, the L2 cache flushed before each one."""

    device: str
    plan: TimingPlan
    name: str = "do_bench"
    flush: str = field(init=False)

    def __post_init__(self):
        self.flush = _flush_description()

    def round(self, provider: Provider) -> list[float]:
        from triton.testing import do_bench

        with provider.context():
            times = do_bench(provider.fn, warmup=self.plan.warmup_ms, rep=self.plan.rep_ms, return_mode="all")
        return [float(t) for t in times]


def _flush_description() -> str:
    try:
        from triton import runtime

        cache = runtime.driver.active.get_empty_cache_for_benchmark()
        size = cache.numel() * cache.element_size()
        del cache
        return f"do_bench-l2-flush-{size >> 20}MiB"
    except Exception:  # the description must never stop a run
        return "do_bench-l2-flush"


@dataclass
class WallTimer:
    """Wall clock around each synchronized call: for devices without timing events (the CPU interpreter,
    the simulated device)."""

    device: str
    plan: TimingPlan
    name: str = "wall-clock"
    flush: str = "none"

    def round(self, provider: Provider) -> list[float]:
        sync = synchronizer(self.device)
        times = []
        with provider.context():
            for _ in range(self.plan.wall_reps):
                sync()
                start = time.perf_counter()
                provider.fn()
                sync()
                times.append((time.perf_counter() - start) * 1e3)
        return times


def make_timer(device: str, plan: TimingPlan):
    return DoBenchTimer(device, plan) if has_timing_events(device) else WallTimer(device, plan)


def kernel_times(timer, providers: list[Provider]) -> dict[str, Stats]:
    """Milliseconds per call: all calls of ``plan.rounds`` alternating rounds pooled per provider."""
    pooled = {p.name: [] for p in providers}
    for _ in range(timer.plan.rounds):
        for provider in providers:
            pooled[provider.name] += timer.round(provider)
    return {name: Stats.of(values) for name, values in pooled.items()}


def _batch_us(provider: Provider, calls: int, sync) -> float:
    """Microseconds per call of ``calls`` calls back to back, one synchronize at the end."""
    fn = provider.fn
    with provider.context():
        fn()  # warm: the allocator and the launch cache are hot before the clock starts
        sync()
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        return (time.perf_counter() - start) * 1e6 / calls


def per_call_times(device: str, plan: TimingPlan, providers: list[Provider]) -> dict[str, Stats]:
    """Per-call time in microseconds (host overhead included): median over alternating rounds.

    do_bench's flush hides host time shorter than the flush, so small shapes are timed this way.
    Both providers get the same number of calls per batch, sized from the slower one.
    """
    sync = synchronizer(device)
    calls = plan.percall_min_calls
    if plan.percall_target_ms:
        estimate_us = max(_batch_us(p, plan.percall_min_calls, sync) for p in providers)
        calls = int(plan.percall_target_ms * 1e3 / max(estimate_us, 1e-3))
    calls = min(max(calls, plan.percall_min_calls), plan.percall_max_calls)
    rounds = {p.name: [] for p in providers}
    for _ in range(plan.percall_rounds):
        for provider in providers:
            rounds[provider.name].append(_batch_us(provider, calls, sync))
    return {name: Stats.of(values) for name, values in rounds.items()}


def first_call(fn: Callable, device: str):
    """(result, milliseconds) of one synchronized call: compilation included when it is the first."""
    sync = synchronizer(device)
    sync()
    start = time.perf_counter()
    result = fn()
    sync()
    return result, (time.perf_counter() - start) * 1e3


def copy_bandwidth(device: str, timer, context=contextlib.nullcontext) -> float:
    """GB/s of a device-to-device copy (bytes read + bytes written), timed like the operators."""
    n = timer.plan.copy_bytes // 4
    src = torch.ones(n, dtype=torch.float32, device=device)
    dst = torch.empty_like(src)
    provider = Provider("copy", lambda: dst.copy_(src), context)
    with context():
        dst.copy_(src)
    times = []
    for _ in range(timer.plan.rounds):
        times += timer.round(provider)
    median_ms = Stats.of(times).median
    return 2 * n * 4 / (median_ms * 1e-3) / 1e9
