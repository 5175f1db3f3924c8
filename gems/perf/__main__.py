"""The gems-perf command line; ``python -m gems.perf`` runs it too."""

from __future__ import annotations

import argparse
import sys

SUITE_HELP = "core: a few shapes per operator that users care about; full: sweeps (default: core)"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="gems-perf",
        description="Time every declared gems operator against ATen on the selected vendor and write perf.csv, "
                    "perf_summary.md, PNG charts and the support matrix (joined with conformance.json when "
                    "--out holds one).",
        epilog="Exit status: 0 when every case was timed or recorded with a reason; 1 when a case gave a wrong "
               "result (mismatch) or raised (error); 2 for bad options, an unknown or absent vendor, an "
               "unwritable --out or a malformed shapes file. Publishing to reports/<vendor>/ is an explicit "
               "step: --out reports/<vendor>.",
    )
    p.add_argument("--vendor", help="vendor backend (default: GEMS_VENDOR, else detected, else interpreter)")
    p.add_argument("--ops", help="comma-separated operators (default: all declared)")
    p.add_argument("--dtypes", help="comma-separated dtypes, e.g. float16,bfloat16 (default: the suite's, from "
                                    "perf/shapes.yaml)")
    p.add_argument("--suite", choices=("core", "full"), default="core", help=SUITE_HELP)
    p.add_argument("--quick", action="store_true", help="tiny shapes, for CI (overrides --suite)")
    p.add_argument("--out", help="output folder (default: runs/<vendor>/, git-ignored, shared with conformance)")
    p.add_argument("--shapes", help="shapes file (default: perf/shapes.yaml, or GEMS_PERF_SHAPES)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    from gems.perf.runner import PerfError, run_perf  # after parsing: --help needs no torch

    try:
        run = run_perf(ops=args.ops, dtypes=args.dtypes, suite=args.suite, quick=args.quick, out=args.out,
                       vendor=args.vendor, shapes_file=args.shapes, progress=not args.no_progress)
    except PerfError as exc:
        print(f"gems-perf: error: {exc}", file=sys.stderr)
        return 2
    from gems.perf.results import aggregates

    counts = run.counts()
    overall = aggregates(run.rows)["overall"]
    print(f"gems-perf {run.env['vendor']} ({run.suite}): "
          + ", ".join(f"{n} {s}" for s, n in counts.items() if n)
          + (f"; geometric-mean speedup {overall:.4g}x" if overall else ""))
    for path in run.written:
        print(f"wrote {path}")
    return 1 if counts["mismatch"] or counts["error"] else 0


if __name__ == "__main__":
    sys.exit(main())
