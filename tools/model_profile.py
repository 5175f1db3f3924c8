"""Where a model workload's time goes under ATen and under gems (run it on the device machine).

    python tools/model_profile.py [--model bert] [--workloads train] [--top 14]

For each workload of the preset (gems-perf --model's workloads: prefill, decode, graph, train, forward), each
side (ATen, then gems, then both again: the second pair is the one to read, the first warms caches and tuning)
prints its wall time per run (best of 3 after 2 warm-up runs), the device time of one profiled run
(torch.profiler) and its top kernels by device time; the gems side also prints the share of its calls that the
native layer replayed and why the others took the Python path. gems-perf --model gives the speed; this says
where a gap comes from. On the CPU (interpreter vendor, tiny preset, float32) it only shows that it works.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's gems

import gems  # noqa: E402
from gems import native  # noqa: E402
from gems.models import build, speed  # noqa: E402


def _wall_ms(work, state, device) -> float:
    best = float("inf")
    for _ in range(3):
        state = work.prepare() if work.fresh else state
        speed.synchronize(device)
        started = time.perf_counter()
        work.run(state)
        speed.synchronize(device)
        best = min(best, (time.perf_counter() - started) * 1e3)
    return best


def _profile(work, state, device, top: int) -> None:
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    state = work.prepare() if work.fresh else state
    with profile(activities=activities) as prof:
        work.run(state)
        speed.synchronize(device)
    events = prof.key_averages()
    print(f"    device time of one run: {sum(e.self_device_time_total for e in events) / 1e3:.2f} ms")
    for e in sorted(events, key=lambda e: -e.self_device_time_total)[:top]:
        if e.self_device_time_total:
            print(f"    {e.self_device_time_total / 1e3:8.3f} ms x{e.count:<5d} {e.key[:110]}")


def _native_share(work, state, device) -> None:
    state = work.prepare() if work.fresh else state
    gems.reset_counts()
    native.reset_counts()
    work.run(state)
    speed.synchronize(device)
    served = sum(gems.call_counts()["gems"].values())
    replayed = sum(native.call_counts().values())
    print(f"    gems calls: {served}, replayed natively {replayed} ({replayed / max(served, 1):.1%})")
    reasons = [(n, overload, why) for overload, whys in native.python_calls().items() for why, n in whys.items()]
    for n, overload, why in sorted(reasons, reverse=True)[:6]:
        print(f"      Python path: {overload} x{n}: {why[:100]}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="bert", help="a gems-perf --model preset (llama, bert)")
    parser.add_argument("--workloads", help="comma-separated kinds (default: all of the model's)")
    parser.add_argument("--top", type=int, default=14, help="kernels listed per side")
    args = parser.parse_args(argv)
    backend = gems.vendor()
    device = backend.device
    on_gpu = device == "cuda"
    spec = build.from_preset(args.model, "full" if on_gpu else "tiny")
    base = build.build(spec)
    dtype = torch.bfloat16 if on_gpu else torch.float32
    kinds = args.workloads.split(",") if args.workloads else None
    for kind in kinds or [None]:
        for side in ("aten", "gems", "aten", "gems"):
            (gems.enable if side == "gems" else gems.disable)()
            model = build.placed(base, dtype, device)
            for work in speed.workloads(model, spec, device, [kind] if kind else None):
                state = work.prepare()
                for _ in range(2):
                    work.run(work.prepare() if work.fresh else state)
                print(f"== {args.model} {work.name} (batch {work.batch}, {work.tokens} tokens), {side}: "
                      f"{_wall_ms(work, state, device):.2f} ms per run", flush=True)
                if not work.graph:
                    _profile(work, state, device, args.top)
                if side == "gems":
                    _native_share(work, state, device)
            del model
    gems.disable()
    return 0


if __name__ == "__main__":
    sys.exit(main())
