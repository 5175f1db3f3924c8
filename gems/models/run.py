"""``gems-perf --model``: one model, ATen and gems side by side in one process: answers, coverage, speed.

    from gems.models.run import run_model
    result = run_model("llama", vendor="nvidia")            # preset llama, full size, bfloat16
    result = run_model(config_file="my_config.json", measure=("answers", "coverage"))

Everything is checked before the model is built (preset, config, dtype, what can be measured on the
vendor's device, the output folder); results are written once, at the end, by :mod:`gems.models.report`.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch

import gems
from gems.models import answers as answers_module
from gems.models import build, report, speed
from gems.models import patched as patched_module
from gems.models.errors import ModelError
from gems.runtime import registration, selection

MEASURES = ("answers", "coverage", "speed")


@dataclass
class ModelRun:
    """What one model run found; ``as_dict()`` is its entry in models.json."""

    name: str
    source: str
    kind: str
    dtype: str
    vendor: str
    device: str
    answers: list = field(default_factory=list)      # Answer.as_dict() rows
    coverage: list = field(default_factory=list)     # trace rows (overload, kind, calls, served...)
    compute_calls: int = 0
    gems_compute_calls: int = 0
    speed: list = field(default_factory=list)        # speed.summarize rows
    patched: dict = field(default_factory=dict)      # --patched: what gems.patch did (gems.models.patched)
    notes: list = field(default_factory=list)
    seconds: float = 0.0

    def answers_ok(self) -> bool:
        return all(a["ok"] for a in self.answers)

    def share(self) -> float | None:
        return self.gems_compute_calls / self.compute_calls if self.compute_calls else None

    def as_dict(self) -> dict:
        found = dict(self.__dict__)
        if not self.patched:  # a run without --patched writes what it always wrote
            del found["patched"]
        return found


def _aten_context(backend):
    """Unregisters gems for the block (ATen's own kernels and per-call cost), as gems-perf times ATen."""
    from gems.perf.runner import gems_off

    return lambda: gems_off(backend.dispatch_key)


def _can_time(backend) -> str:
    """'' when the vendor's device can time a model against ATen, else why not."""
    from gems.perf.timing import interpreted

    if interpreted():
        return (f"vendor {backend.name} runs kernels in Triton's CPU interpreter, whose times mean nothing; drop "
                "'speed' from --model-measure, or run on a GPU vendor")
    if not backend.capabilities.aten_kernels:
        return f"vendor {backend.name}'s device has no ATen kernels to time against"
    return ""


def _selection(option, known: tuple, flag: str) -> tuple:
    chosen = tuple(m.strip() for m in option.split(",") if m.strip()) if isinstance(option, str) else tuple(option)
    unknown = [m for m in chosen if m not in known]
    if unknown or not chosen:
        raise ModelError(f"{flag}: {'unknown ' + ', '.join(unknown) if unknown else 'empty selection'}; choose from "
                         f"{', '.join(known)}")
    return chosen


def plan(model=None, config_file=None, size=None, dtype=None, measure=None, vendor=None, workloads=None):
    """Check every option and return (backend, spec, dtype, measures, workload kinds) before anything heavy
    runs."""
    if bool(model) == bool(config_file):
        raise ModelError("give one of --model NAME and --model-config FILE.json")
    try:
        backend = selection.select(vendor, why="the vendor argument (--vendor)") if vendor else selection.current()
    except gems.VendorError as exc:
        raise ModelError(f"--vendor: {exc}" if vendor else str(exc)) from exc
    from gems.perf.timing import interpreted

    on_cpu_interpreter = interpreted()
    size = size or ("tiny" if on_cpu_interpreter else "full")
    spec = build.from_preset(model, size) if model else build.from_config_file(config_file)
    dtype = build.dtype_of(dtype or ("float32" if on_cpu_interpreter else "bfloat16"))
    default = ("answers", "coverage") if _can_time(backend) else MEASURES
    measures = _selection(default if measure is None else measure, MEASURES, "--model-measure")
    kinds = speed.KINDS if workloads is None else _selection(workloads, speed.KINDS, "--model-workloads")
    if "speed" in measures and _can_time(backend):
        raise ModelError(f"--model-measure speed: {_can_time(backend)}")
    if dtype in (torch.float16, torch.bfloat16) and not backend.capabilities.supports(dtype):
        raise ModelError(f"--model-dtype: vendor {backend.name} does not support {dtype}")
    return backend, spec, dtype, measures, kinds


def _check_devices(devices: int, backend, spec) -> None:
    if devices < 1:
        raise ModelError(f"--model-devices: {devices} is not a number of devices")
    if devices == 1:
        return
    if spec.kind != build.DECODER:
        raise ModelError(f"--model-devices {devices}: tensor parallelism covers decoders; {spec.name} is an encoder")
    from gems.models.parallel import check_splittable

    check_splittable(spec.config, devices)
    module = getattr(torch, backend.device, None)
    count = module.device_count() if backend.device != "cpu" and hasattr(module, "device_count") else None
    if count is not None and count < devices:
        raise ModelError(f"--model-devices {devices}: this machine has {count} {backend.device} device(s)")


def run_model(model=None, config_file=None, size=None, dtype=None, measure=None, vendor=None, out=None,
              rounds: int = 5, progress: bool = True, workloads=None, devices: int = 1, patched: bool = False
              ) -> ModelRun:
    """Run one model as the module docstring says; write models.json/.md/.csv into ``out``. ``devices`` > 1:
    tensor parallel over that many devices (:mod:`gems.models.parallel`): answers against one device, speed.
    ``patched``: a third side, the model under gems.patch (:mod:`gems.models.patched`)."""
    backend, spec, dtype, measures, kinds = plan(model, config_file, size, dtype, measure, vendor, workloads)
    _check_devices(devices, backend, spec)
    if patched and devices > 1:
        raise ModelError("--patched: the tensor-parallel run is not patched; drop --model-devices or --patched")
    out = report.check_out_dir(Path(out) if out else report.default_dir(backend.name))
    if devices > 1:
        return _run_parallel(devices, model, config_file, size, dtype, measures, backend, spec, out, rounds)
    def say(text):  # progress: one line per step, on stderr
        if progress:
            print(f"gems-perf --model: {text}", file=sys.stderr, flush=True)

    started = time.perf_counter()
    say(f"{spec.name} ({spec.source}, {spec.kind}) in {str(dtype).removeprefix('torch.')} on vendor {backend.name} "
        f"({backend.device}): {', '.join(measures)}")
    previous = registration.snapshot()
    gems.enable()
    try:
        return _run_single(backend, spec, dtype, measures, kinds, out, rounds, say, started, patched)
    finally:  # the caller's registration back: a library caller need not have had gems on
        registration.apply(previous, backend.dispatch_key)


def _run_single(backend, spec, dtype, measures, kinds, out, rounds, say, started, patched) -> ModelRun:
    result = ModelRun(spec.name, spec.source, spec.kind, str(dtype).removeprefix("torch."), backend.name,
                      backend.device)
    model_cpu = build.build(spec)
    patching = patched_module.Patching() if patched else None
    aten = _aten_context(backend)
    trace = gems.trace(backend.device) if "coverage" in measures else None
    if "answers" in measures or trace is not None:
        say("answers: reference, ATen, gems")
        found = answers_module.check(model_cpu, spec, dtype, backend.device, aten, speed.gems_context,
                                     aten_on_device=backend.capabilities.aten_kernels,
                                     reference_on_device=backend.device == "cuda", trace=trace, patching=patching)
        if "answers" in measures:
            result.answers = [a.as_dict() for a in found]
    if "speed" in measures:
        tested = build.placed(model_cpu, dtype, backend.device)
        del model_cpu
        for workload in speed.workloads(tested, spec, backend.device, kinds):
            say(f"speed: {workload.name}, batch {workload.batch}, {workload.tokens} tokens")
            try:
                if trace is not None and not workload.graph:
                    with trace:  # once more under gems, untimed: what this workload dispatches
                        workload.run(workload.prepare())
                sides = {"aten": aten, "gems": speed.gems_context}
                if patching is not None:
                    sides["patched"] = patching.context(tested)
                replays = {}
                times = speed.time_workload(workload, backend.device, sides, rounds, replays=replays)
                peaks = speed.peak_memory(workload, backend.device, sides) if patching is not None else None
            except Exception as exc:  # a failing workload is a result; the device may be unusable after it
                row = {"workload": workload.name, "batch": workload.batch, "tokens": workload.tokens,
                       "error": f"{type(exc).__name__}: {exc}".splitlines()[0][:300]}
                result.speed.append(row)
                say(f"  error: {row['error']}")
                if "device-side assert" in str(exc) or "illegal" in str(exc):
                    break
                continue
            row = speed.summarize(workload, times, peaks, replays)
            result.speed.append(row)
            say(f"  ATen {row['aten_ms']:.2f} ms, gems {row['gems_ms']:.2f} ms: {row['speedup']:.3f}x"
                + (f"; patched {row['patched_ms']:.2f} ms: {row['patched_speedup']:.3f}x" if patching else ""))
    if trace is not None:
        result.coverage = trace.summary()
        result.gems_compute_calls, result.compute_calls = trace.compute_share()
    result.seconds = time.perf_counter() - started
    result.notes = _notes(backend, registration)
    if patching is not None:
        result.patched = patching.summary("speed" in measures)
    report.write(out, result)
    return result


def _run_parallel(devices, model, config_file, size, dtype, measures, backend, spec, out, rounds) -> ModelRun:
    from gems.models.parallel_run import run_parallel

    started = time.perf_counter()
    print(f"gems-perf --model: {spec.name} tensor parallel over {devices} {backend.device} devices: "
          f"{', '.join(m for m in measures if m != 'coverage')}", file=sys.stderr, flush=True)
    found = run_parallel(devices, {"model": model, "config_file": config_file, "size": spec.size,
                                   "dtype": str(dtype).removeprefix("torch."), "vendor": backend.name,
                                   "measures": measures, "rounds": rounds})
    result = ModelRun(f"{spec.name} x{devices}", f"{spec.source}, tensor parallel over {devices} devices",
                      spec.kind, str(dtype).removeprefix("torch."), backend.name, found["device"],
                      answers=found["answers"], speed=found["speed"])
    result.notes = ["column-parallel q/k/v/gate/up and row-parallel o/down projections with all-reduce; answers "
                    "compare the sharded model with the same model on one device"]
    result.seconds = time.perf_counter() - started
    report.write(out, result)
    return result


def _notes(backend, registration_module) -> list[str]:
    notes = []
    if not backend.capabilities.aten_kernels:
        notes.append(f"{backend.device} has no ATen kernels: ATen's answer was computed on the CPU in the same dtype")
    fallbacks = registration_module.fallback_calls
    if fallbacks:
        # Counted over the whole run (every workload and round), not only the coverage trace: name them here.
        top = ", ".join(f"{overload}: {reason} (x{calls})" for (overload, reason), calls in fallbacks.most_common(4))
        more = f"; {len(fallbacks) - 4} more (overload, reason) pairs" if len(fallbacks) > 4 else ""
        notes.append(f"{sum(fallbacks.values())} gems calls fell back to ATen over the whole run (every workload "
                     f"and round, not only the coverage trace): {top}{more}")
    return notes
