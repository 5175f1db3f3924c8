"""The gems-perf command line; ``python -m gems.perf`` runs it too."""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys

SUITE_HELP = ("core: a few shapes per operator that users care about; full: sweeps; models: the layers of models "
              "(the matrix products and attention: mm, addmm, bmm, baddbmm, scaled_dot_product_attention; without "
              "--ops only the operators that have such shapes run) (default: core on a device, quick on the CPU "
              "interpreter)")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="gems-perf",
        description="Time every declared gems operator against ATen on the selected vendor and write perf.csv, "
                    "perf_summary.md, PNG charts and the support matrix (joined with conformance.json when "
                    "--out holds one).",
        epilog="Exit status: 0 when every case was timed or recorded with a reason; 1 when a case gave a wrong "
               "result (mismatch) or raised (error), or a model's answers were outside ATen's own error; 2 for bad "
               "options, an unknown or absent vendor, an unwritable --out, a malformed shapes file, or a model that "
               "cannot run (unknown preset, unbuildable config, unsupported dtype, speed asked where nothing can "
               "be timed). Publishing to reports/<vendor>/ is an explicit step: --out reports/<vendor>.",
    )
    p.add_argument("--vendor", help="vendor backend (default: GEMS_VENDOR, else detected, else interpreter)")
    p.add_argument("--ops", help="comma-separated operators (default: all declared)")
    p.add_argument("--dtypes", help="comma-separated dtypes, e.g. float16,bfloat16 (default: the suite's, from "
                                    "perf/shapes.yaml)")
    p.add_argument("--suite", choices=("core", "full", "models"), help=SUITE_HELP)
    p.add_argument("--quick", action="store_true", help="tiny shapes, for CI (overrides --suite)")
    p.add_argument("--size", choices=("small", "large"), help="only the shapes of one size class: small (at most "
                   "the shapes file's small_max_numel elements; speedup from per-call time) or large (kernel time); "
                   "operators without such shapes are left out")
    p.add_argument("--out", help="output folder (default: runs/<vendor>/, git-ignored, shared with conformance)")
    p.add_argument("--shapes", help="shapes file (default: perf/shapes.yaml, or GEMS_PERF_SHAPES)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("-j", "--jobs", type=int, help="precompile worker processes: before timing, N processes make the "
                   "first call of every case (Triton compiles, tuned kernels compile every config untimed), so "
                   "timing finds the cache warm; 1: none, the timing process compiles as it goes (default: one per "
                   "CPU core on a device, 1 on the CPU interpreter)")
    p.add_argument("--devices", metavar="0,1", help="time on these devices at once, one process and one shard of "
                   "the cases each, merged into one run (default: the current device alone)")
    p.add_argument("--time-limit", type=float, metavar="SECONDS", help="start no case after SECONDS from the "
                   "start; the finished cases are written and the exit status is 130, as after Ctrl-C")
    p.add_argument("--list-ops", action="store_true", help="list the declared operators (the names --ops takes, "
                   "here and in pytest conformance), their family and ATen overloads, and exit")
    models = p.add_argument_group("models (instead of operators: docs/models.md)")
    models.add_argument("--model", help="a preset model: llama, bert (built from its configuration, random weights)")
    models.add_argument("--model-config", metavar="FILE.json", help="any transformers config.json (decoder-only or "
                        "encoder language model), random weights")
    models.add_argument("--model-size", choices=("tiny", "small", "full"), help="preset size (default: full on a GPU, "
                        "tiny on the CPU interpreter)")
    models.add_argument("--model-dtype", help="float32, bfloat16, float16 (default: bfloat16 on a GPU, float32 on the "
                        "interpreter)")
    models.add_argument("--model-measure", help="comma-separated: answers, coverage, speed (default: all that the "
                        "vendor's device can measure)")
    models.add_argument("--model-rounds", type=int, default=5, help="alternating timing rounds (default 5)")
    models.add_argument("--model-devices", type=int, default=1, help="tensor parallel over N devices, one process "
                        "each (decoders; NCCL on GPUs, gloo on the CPU interpreter)")
    models.add_argument("--model-workloads", help="comma-separated: prefill, decode, graph (CUDA-graph decode), "
                        "train, forward (default: all of the model's)")
    models.add_argument("--patched", action="store_true", help="also run the model patched with gems' fused "
                        "kernels (gems.patch): answers, speed and peak memory beside the unpatched gems and ATen")
    return p


def run_models(args) -> int:
    from gems.models import report
    from gems.models.errors import ModelError
    from gems.models.run import run_model

    try:
        run = run_model(args.model, args.model_config, args.model_size, args.model_dtype, args.model_measure,
                        args.vendor, args.out, rounds=args.model_rounds, workloads=args.model_workloads,
                        devices=args.model_devices, patched=args.patched)
    except ModelError as exc:
        print(f"gems-perf: error: {exc}", file=sys.stderr)
        return 2
    print(report.console(run.as_dict()))
    print(f"wrote {', '.join(report.FILES)} in {args.out or report.default_dir(run.vendor)}")
    return 0 if run.answers_ok() else 1


def list_ops() -> int:
    """One line per declared operator: name, family, the ATen overloads (or gems API) it serves; an operator
    that serves overloads of others through their composite (an optimizer step) names those, in brackets."""
    import gems

    try:
        from gems import ops  # selects the vendor (GEMS_VENDOR, else detected): its kernels are defined on import
    except gems.VendorError as exc:
        print(f"gems-perf: error: {exc}", file=sys.stderr)
        return 2
    specs = ops.all_specs()
    width = max(len(s.name) for s in specs)
    for spec in specs:
        served = ", ".join([*spec.impls, *spec.api]) or f"[{', '.join(spec.composite_of)}]"
        print(f"{spec.name:<{width}}  {spec.family:<13} {served}")
    print(f"{len(specs)} operators (also: python -c \"import gems.ops; print(gems.ops.names())\")")
    return 0


def _interrupt(signum, frame):
    raise KeyboardInterrupt


@contextlib.contextmanager
def _signals_stop_the_run():
    """Ctrl-C and SIGTERM (``timeout``'s default) both end the run keeping its finished cases. SIGINT gets Python's
    handler even where gems-perf was started with it ignored (a shell's background job), so that ``kill -INT`` and
    ``timeout -s INT`` work from scripts too. The handlers before are restored after."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler), signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before[0])
        signal.signal(signal.SIGTERM, before[1])


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    from gems.perf.progress import quiet_warnings  # a plain module: --help still needs no torch

    quiet_warnings()
    if args.list_ops:
        return list_ops()
    if args.model or args.model_config:
        return run_models(args)
    from gems.perf.run import PerfError, run_perf  # after parsing: --help needs no torch

    try:
        with _signals_stop_the_run():
            run = run_perf(ops=args.ops, dtypes=args.dtypes, suite=args.suite, quick=args.quick, out=args.out,
                           vendor=args.vendor, shapes_file=args.shapes, progress=not args.no_progress,
                           jobs=args.jobs, devices=args.devices, time_limit=args.time_limit,
                           size=args.size)
    except PerfError as exc:
        print(f"gems-perf: error: {exc}", file=sys.stderr)
        return 2
    from gems.perf.results import aggregates

    counts = run.counts()
    if run.interrupted is not None:
        how = "interrupted" if run.stopped_by == "Ctrl-C" else f"stopped by {run.stopped_by}"
        print(f"gems-perf: {how} after {len(run.rows)} of {run.interrupted} cases; the finished ones are "
              f"written: {', '.join(str(p) for p in run.written[:1])} ...", file=sys.stderr)
        return 130
    overall = aggregates(run.rows)["overall"]
    print(f"gems-perf {run.env['vendor']} ({run.suite}): "
          + ", ".join(f"{n} {s}" for s, n in counts.items() if n)
          + (f"; geometric-mean speedup {overall:.4g}x" if overall else ""))
    for path in run.written:
        print(f"wrote {path}")
    return 1 if counts["mismatch"] or counts["error"] else 0


if __name__ == "__main__":
    sys.exit(main())
