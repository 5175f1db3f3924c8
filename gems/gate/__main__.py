"""gems-gate: judge a candidate run against the vendor's baseline, or promote a run to the baseline.

    gems-gate --vendor V [--candidate runs/V] [--baseline reports/V] [--out verdict.md]
              [--perf on|off] [--threshold PCT] [--remeasure | --no-remeasure] [--perf-args "--suite core"]
              [--allow-version-change]
    gems-gate promote --vendor V [--candidate runs/V] [--reports reports] [--force --reason "..."]
    gems-gate merge --out runs/V SHARD_DIR SHARD_DIR...

Check exits 0 (pass), 1 (regression) or 2 (unusable input: the message names the file and the problem).
Promote exits 0 (promoted), 1 (refused: the run has failures) or 2 (unusable input).
Merge (conformance run in --ops shards, one run in all else) exits 0 (merged) or 2 (shards that are not one run).
"""

from __future__ import annotations

import argparse
import shlex
import sys
import traceback
from pathlib import Path

from gems.gate import PASS, REGRESSION, UNUSABLE, config, conformance_diff, perf_diff, registry
from gems.gate.inputs import (
    COMPACT_FILE,
    CONFORMANCE_FILE,
    PERF_FILE,
    GateInputError,
    check_comparable,
    load_run,
    read_perf,
)
from gems.gate.merge import merge
from gems.gate.promote import PromoteRefused, promote
from gems.gate.verdict import Verdict, render, render_unusable
from gems.report.conformance_report import find as find_conformance

COMMANDS = ("check", "promote", "merge")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gems-gate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("check", help="compare a candidate run with the baseline (the default command)",
                                epilog="exit status: 0 pass, 1 regression, 2 unusable input. docs/gating.md")
    check.add_argument("--vendor", required=True, help="the vendor whose results are judged")
    check.add_argument("--candidate", type=Path, help="the run to judge (default: runs/<vendor>)")
    check.add_argument("--baseline", type=Path, help="the committed baseline (default: reports/<vendor>)")
    check.add_argument("--out", type=Path, help="also write the Markdown verdict to this file")
    check.add_argument("--perf", choices=("on", "off"), help="gate perf results (default: the vendor's gate.yaml)")
    check.add_argument("--threshold", type=float, help="perf regression threshold in percent (default: gate.yaml)")
    check.add_argument("--remeasure", action=argparse.BooleanOptionalAction, default=None,
                       help="re-run gems-perf for suspect operators before blocking (default: gate.yaml; "
                            "on for device vendors)")
    check.add_argument("--perf-args", default="",
                       help="options the candidate's gems-perf run used (its suite), repeated when re-measuring; "
                            "write --perf-args=\"--suite core\"")
    check.add_argument("--allow-version-change", action="store_true",
                       help="compare even though torch/triton differ from the baseline's (an upgrade)")
    # `gems-gate --help` lists the check options too: check is the default command, usually run without its name.
    options = check.format_help().split("options:", 1)[-1]
    options = "\n".join(line for line in options.splitlines() if "show this help" not in line)
    parser.epilog = "options of check (the default command):" + options
    prom = commands.add_parser("promote", help="make a run the vendor's baseline in reports/<vendor>/",
                               epilog="exit status: 0 promoted, 1 refused (failures), 2 unusable input")
    prom.add_argument("--vendor", required=True, help="the vendor whose baseline is replaced")
    prom.add_argument("--candidate", type=Path, help="the run to promote (default: runs/<vendor>)")
    prom.add_argument("--reports", type=Path, default=Path("reports"), help="reports directory (default: reports)")
    prom.add_argument("--force", action="store_true", help="promote a run that has failures (needs --reason)")
    prom.add_argument("--reason", help="why a forced promotion is right; recorded in PROMOTIONS.md")
    shards = commands.add_parser("merge", help="join conformance runs made in --ops shards into one run",
                                 epilog="exit status: 0 merged, 2 shards that are not one run (the message says why)")
    shards.add_argument("--out", type=Path, required=True, help="the merged run's directory (e.g. runs/<vendor>)")
    shards.add_argument("shards", type=Path, nargs="+", help="the shards' report directories")
    return parser


def _load_runs(args, settings):
    """(candidate, baseline, perf note): perf results are read only where perf is gated."""
    vendor = args.vendor
    perf_on = settings.perf_gating if args.perf is None else args.perf == "on"
    where = "--perf" if args.perf else (_shown(settings.sources[0]) if settings.sources else "the default")
    baseline_dir = args.baseline or Path("reports") / vendor
    candidate_dir = args.candidate or Path("runs") / vendor
    if not find_conformance(baseline_dir).is_file():
        raise GateInputError(f"{baseline_dir / COMPACT_FILE}: baseline file not found (nor {CONFORMANCE_FILE}; a "
                             f"vendor's first baseline is made with: gems-gate promote --vendor {vendor} --candidate "
                             f"{candidate_dir})")
    baseline = load_run(baseline_dir, perf=perf_on and (baseline_dir / PERF_FILE).is_file())
    candidate = load_run(candidate_dir, perf=False)
    if baseline.perf is not None:
        if not candidate.perf_path.is_file():
            raise GateInputError(
                f"{candidate.perf_path}: file not found, but perf is gated for {vendor} ({where}) and the "
                f"baseline has {baseline.perf_path}: run gems-perf --vendor {vendor} --out {candidate_dir} first")
        read_perf(candidate)
    if not perf_on:
        note = f"Perf not gated for {vendor} (perf_gating off: {where})."
    elif baseline.perf is None:
        note = (f"Perf not gated: the baseline has no {PERF_FILE}; promote a run with perf results to start "
                f"gating perf.")
    else:
        note = f"Perf gated: threshold {_threshold(args, settings):g}% ({where})."
    return candidate, baseline, note


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _threshold(args, settings) -> float:
    return settings.perf_threshold_pct if args.threshold is None else args.threshold


def check(args, registered=registry.registered_operators, remeasurer=perf_diff.gems_perf_remeasurer) -> Verdict:
    """Judge the candidate; raise GateInputError when it cannot be judged.

    registered(vendor) -> {operator: overloads}; remeasurer(vendor, perf_args) -> remeasure(ops) -> rows.
    Both are parameters so that tests can stand in for the subprocesses they run.
    """
    settings = config.load(args.vendor)
    if args.threshold is not None and not 0 < args.threshold < 100:
        raise GateInputError(f"--threshold must be between 0 and 100 (percent), got {args.threshold:g}")
    candidate, baseline, perf_note = _load_runs(args, settings)
    notes = check_comparable(args.vendor, candidate, baseline, args.allow_version_change)
    conformance = conformance_diff.compare(baseline.conformance, candidate.conformance, registered(args.vendor))
    perf = None
    if baseline.perf is not None:
        remeasure = settings.remeasure if args.remeasure is None else args.remeasure
        again = remeasurer(args.vendor, shlex.split(args.perf_args)) if remeasure else None
        perf = perf_diff.compare(baseline.perf, candidate.perf, _threshold(args, settings), again)
        perf_note += " Suspect operators re-measured before blocking." if remeasure else " No re-measuring."
    return Verdict(args.vendor, candidate, baseline, conformance, perf, perf_note, notes)


def _emit(text: str, out: Path | None) -> None:
    print(text, end="")
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)


def _run_check(args, **seams) -> int:
    try:
        verdict = check(args, **seams)
    except GateInputError as exc:
        print(f"gems-gate: unusable input: {exc}", file=sys.stderr)
        _emit(render_unusable(args.vendor, str(exc)), args.out)
        return UNUSABLE
    except Exception as exc:  # a crash must read neither as a pass nor as a regression
        traceback.print_exc()
        _emit(render_unusable(args.vendor, f"gems-gate failed: {type(exc).__name__}: {exc}"), args.out)
        return UNUSABLE
    _emit(render(verdict), args.out)
    return REGRESSION if verdict.blocking else PASS


def _run_promote(args) -> int:
    if args.force and not (args.reason and args.reason.strip()):
        print("gems-gate promote: --force needs --reason \"...\": a forced promotion records why", file=sys.stderr)
        return UNUSABLE
    try:
        for line in promote(args.vendor, args.candidate or Path("runs") / args.vendor, args.reports, args.force,
                            args.reason):
            print(line)
    except GateInputError as exc:
        print(f"gems-gate promote: unusable input: {exc}", file=sys.stderr)
        return UNUSABLE
    except PromoteRefused as exc:
        print(f"gems-gate promote: refused: {exc}", file=sys.stderr)
        return REGRESSION
    return PASS


def _run_merge(args) -> int:
    try:
        for line in merge(args.shards, args.out):
            print(line)
    except GateInputError as exc:
        print(f"gems-gate merge: unusable input: {exc}", file=sys.stderr)
        return UNUSABLE
    return PASS


def main(argv=None, **seams) -> int:
    """seams: ``registered`` and ``remeasurer`` stand-ins for :func:`check` (tests)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in COMMANDS + ("-h", "--help"):
        argv.insert(0, "check")
    args = _parser().parse_args(argv)
    if args.command == "promote":
        return _run_promote(args)
    if args.command == "merge":
        return _run_merge(args)
    return _run_check(args, **seams)


if __name__ == "__main__":
    sys.exit(main())
