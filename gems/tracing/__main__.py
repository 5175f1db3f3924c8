"""gems-trace (also ``python -m gems.tracing``): run a script with gems enabled, list what ran where."""

from __future__ import annotations

import argparse
import os
import runpy
import sys
from pathlib import Path

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
    problem = _unusable(options)
    if problem:  # before the vendor is set up or the script runs a line
        print(f"gems-trace: error: {problem}", file=sys.stderr)
        return 2
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


def _unusable(options) -> str:
    """Why the script cannot run or its tables cannot be written, or ''."""
    script = Path(options.script)
    if not script.is_file():
        return f"script {options.script}: {'is a directory' if script.is_dir() else 'no such file'}"
    for flag, path in (("--csv", options.csv), ("--json", options.json)):
        if path is None:
            continue
        folder = Path(path).resolve().parent
        if not folder.is_dir() or not os.access(folder, os.W_OK) or Path(path).is_dir():
            return f"{flag} {path}: cannot be written (its folder {folder} is missing or not writable)"
    return ""


if __name__ == "__main__":
    sys.exit(main())
