"""Which operators' steady-state calls the native layer replays, and why the others stay on the Python path.

A call signature the native layer cannot replay pays the Python dispatcher hop (10-150 us of host time) on
every call, which the GPU timers then see as the operator's time whenever it exceeds the kernel's (the 3x3
convolutions of 2026-11-23: an ATen copy inside made every call a Python call, 0.08 ms of kernel timed as
0.08-0.34 ms). This script calls every operator's perf inputs (the shapes of one suite) three times and
prints, per operator, the calls replayed natively, the calls that ran Python after the first, and the reason
the layer gave (gems.native.python_reasons()). Same keying and recording on every vendor, so the interpreter
vendor (CPU) finds the same refusals as the GPU, at small shapes:

    GEMS_VENDOR=interpreter python tools/native_coverage.py [--ops a,b] [--suite core] [--size small]
"""

from __future__ import annotations

import argparse
import sys

import gems
from gems import native
from gems.perf import runner, shapes
from gems.runtime import registration


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ops", help="comma-separated operator names (default: all with perf inputs)")
    parser.add_argument("--suite", default="core")
    parser.add_argument("--size", default="small", help="size class of the shapes to call (small, large, all)")
    args = parser.parse_args(argv)
    gems.enable()
    status = native.status()
    if not status["active"]:
        print(f"the native layer is not active: {status['reason']}", file=sys.stderr)
        return 2
    backend = gems.vendor()
    book = shapes.load()
    cases = [c for c in runner.list_cases(runner.select_specs(args.ops), book, args.suite, backend)
             if c.status is None and (args.size == "all" or c.shape.size_class == args.size)]
    stuck = 0
    for case in cases:
        native.invalidate()
        native.reset_counts()
        with registration.aten_only():
            sample = case.spec.perf.inputs(case.shape.dims, case.dtype, backend.device).built()
        call = sample.call or case.spec.call
        python_before = sum(registration.gems_calls[o] for o in case.spec.overloads)
        for _ in range(3):
            call(*sample.args, **sample.kwargs)
        replayed = sum(native.call_counts().get(o, 0) for o in case.spec.overloads)
        # gems_calls counts every call gems served, replayed ones too
        python = sum(registration.gems_calls[o] for o in case.spec.overloads) - python_before - replayed
        reasons = {o: r for o, r in native.python_reasons().items() if o in case.spec.overloads}
        if python > 1:
            stuck += 1
            why = "; ".join(f"{o}: {r}" for o, r in reasons.items()) or "no plan recorded (deferred or not served)"
            print(f"PYTHON   {case.label}: {python - 1} warm calls in Python, {replayed} replayed; {why}")
        else:
            print(f"native   {case.label}: {replayed} warm calls replayed")
    print(f"{stuck} of {len(cases)} cases run their warm calls in Python")
    return 0


if __name__ == "__main__":
    sys.exit(main())
