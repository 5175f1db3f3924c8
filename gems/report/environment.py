"""Where a result came from: vendor, device, driver, versions, date. Every report records it."""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
from pathlib import Path

import torch

RUNS_DIR = Path("runs")  # git-ignored; reports/<vendor>/ changes only by an explicit promote


def default_run_dir(vendor: str) -> Path:
    return RUNS_DIR / vendor


def _nvidia_driver() -> str | None:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout.strip() else None


def device_name(backend) -> str:
    if backend.device == "cpu":
        return f"cpu {platform.machine()} (Triton interpreter)"
    module = getattr(torch, backend.device, None)
    get_name = getattr(module, "get_device_name", None)
    return get_name() if get_name else backend.device


def source_commit() -> str | None:
    """The gems checkout's commit (short hash, "+dirty" with uncommitted changes), or None outside git.

    GEMS_SOURCE_COMMIT names it where the tree is a copy whose git history is not its own (a device
    machine that receives a copy of the working tree: a device-tool script passes the commit it was
    given)."""
    named = os.environ.get("GEMS_SOURCE_COMMIT")
    if named:
        return named
    where = Path(__file__).resolve().parents[2]
    try:
        head = subprocess.run(["git", "-C", str(where), "rev-parse", "--short=10", "HEAD"],
                              capture_output=True, text=True, timeout=30)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", str(where), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def environment(backend) -> dict:
    import triton  # after the vendor chose Triton's mode (the interpreter vendor sets it)

    return {
        "vendor": backend.name,
        "device": device_name(backend),
        "driver": _nvidia_driver() if backend.device == "cuda" else None,
        # False on a device where ATen has no kernels (the simulated one): no ATen answer or time there.
        "aten_on_device": backend.capabilities.aten_kernels,
        "torch": torch.__version__,
        "triton": triton.__version__,
        "python": platform.python_version(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "commit": source_commit(),
    }
