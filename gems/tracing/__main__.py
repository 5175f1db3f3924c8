"""gems-trace (also ``python -m gems.tracing``): run a script with gems enabled, list what ran where."""

from __future__ import annotations

import argparse
import runpy
import sys

import gems
from gems.runtime import selection
from gems.tracing import Trace


def main(argv=None) -> int:
    """Run a Python script with gems enabled and report what ran where; the script's exit status."""
    parser = argparse.ArgumentParser(
        prog="gems-trace", description="Run a Python script with every gems operator registered and list each "
        "ATen overload dispatched on the vendor's device: calls, and whether a gems kernel ran, ATen ran after a "
        "fallback (with the reason), or gems does not register it.")
    parser.add_argument("--vendor", help="vendor backend (default: GEMS_VENDOR, else detected, else interpreter)")
    parser.add_argument("--csv", help="also write the table as CSV to this file")
    parser.add_argument("--json", help="also write it as JSON to this file")
    parser.add_argument("script", help="the Python script to run")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
    options = parser.parse_args(argv)
    try:
        backend = selection.select(options.vendor, why="the --vendor option") if options.vendor else \
            selection.current()
    except gems.VendorError as exc:
        print(f"gems-trace: error: --vendor: {exc}", file=sys.stderr)
        return 2
    print(f"gems-trace: vendor {backend.name} ({selection.selected_because()}), device {backend.device}",
          file=sys.stderr)
    gems.enable()
    saved_argv, status = sys.argv, 0
    sys.argv = [options.script, *options.args]
    recorder = Trace(backend.device)
    try:
        with recorder:
            runpy.run_path(options.script, run_name="__main__")
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.argv = saved_argv
        print(recorder.table(), file=sys.stderr)
        if options.csv:
            recorder.to_csv(options.csv)
        if options.json:
            recorder.to_json(options.json)
    return status


if __name__ == "__main__":
    sys.exit(main())
