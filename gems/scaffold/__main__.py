"""Command line of gems-scaffold (also ``python -m gems.scaffold``)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from gems.scaffold.core import ScaffoldError, plan, write


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gems-scaffold",
        description="Create a vendor backend (gems/runtime/backend/_<vendor>/, reports/<vendor>/, "
                    "ci/workflows/<vendor>.yml) that inherits its base vendor's kernels and configs.",
    )
    parser.add_argument("--vendor", required=True, help="name of the new vendor: lower case, a Python identifier")
    parser.add_argument("--base", default="nvidia",
                        help="vendor whose kernels, configs and overrides it inherits (default: nvidia)")
    parser.add_argument("--device-name", default=None,
                        help="torch device type of its tensors: cuda, cpu, or your own (default: the base's)")
    parser.add_argument("--query-cmd", default=None,
                        help="shell command that succeeds only where the device is present, '' for none "
                             "(default: the base's when the device is the base's, else none)")
    parser.add_argument("--dispatch-key", default=None,
                        help="dispatch key the operators register under: CUDA, CPU, PrivateUse1... "
                             "(default: the base's when the device is the base's, else derived from the device)")
    parser.add_argument("--dry-run", action="store_true", help="print what would be written; write nothing")
    parser.add_argument("--force", action="store_true",
                        help="replace a vendor that gems-scaffold made earlier (never a built-in or hand-made one)")
    return parser


def _show(path: Path, root: Path) -> str:
    try:
        return os.path.relpath(path, Path.cwd()) if path.is_relative_to(Path.cwd()) else str(path.relative_to(root))
    except ValueError:
        return str(path)


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    try:
        made = plan(args.vendor, base=args.base, device_name=args.device_name, query_cmd=args.query_cmd,
                    dispatch_key=args.dispatch_key, force=args.force)
        if not args.dry_run:
            write(made)
    except ScaffoldError as exc:
        print(f"gems-scaffold: error: {exc}. Nothing was written.", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("gems-scaffold: interrupted; nothing was written.", file=sys.stderr)
        return 130
    where = (f"base {made.base}, device {made.device_name}, dispatch key {made.dispatch_key}, "
             f"device query {made.query_cmd or 'none'}")
    if args.dry_run:
        print(f"gems-scaffold: dry run for vendor {made.vendor!r} ({where}); nothing written. It would:")
    else:
        replaced = any(target.replace for target in made.targets)
        print(f"gems-scaffold: {'replaced' if replaced else 'created'} vendor {made.vendor!r} ({where}):")
    for verb, path in made.paths():
        verb = {"create": "created", "replace": "replaced", "keep": "kept"}[verb] if not args.dry_run else verb
        print(f"  {verb:<8} {_show(path, made.root)}")
    for note in made.notes:
        print(f"note: {note}")
    v = made.vendor
    absent = None if args.dry_run else _device_absent(v)
    if absent:
        print(f"note: {absent}: the commands below need that device and exit with an error here. To rehearse on "
              f"this machine's CPU, scaffold a vendor on the interpreter (gems-scaffold --vendor {v}_cpu --base "
              f"interpreter --device-name cpu) or on the simulated device (--base sim --device-name {v}), and run "
              "the same commands with that vendor's name.")
    print("Next:")
    print(f"  GEMS_VENDOR={v} pytest conformance --vendor {v} --quick")
    print(f"  GEMS_VENDOR={v} gems-perf --vendor {v} --quick")
    print(f"  git add gems/runtime/backend/_{v} reports/{v} ci/workflows/{v}.yml")
    return 0


def _device_absent(vendor: str) -> str | None:
    """Why the new vendor's device cannot be used on this machine, or None when it can."""
    from gems.runtime import selection
    from gems.runtime.vendor import VendorError

    try:
        backend = selection.load_backend(vendor)
        for member in reversed(list(backend.chain())):  # an out-of-tree device appears once its loader ran
            load_device = getattr(member._module, "load_device", None)
            if load_device is not None:
                return None  # its own loader (the simulated device's builds it): checked when it is selected
        selection.check_available(backend)
    except VendorError as exc:
        return f"vendor {vendor}'s device is not usable on this machine ({str(exc).split(': ', 1)[-1].split('. ')[0]})"
    return None


if __name__ == "__main__":
    sys.exit(main())
