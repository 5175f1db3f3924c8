"""Vendor backends: what a vendor declares, how one is found, loaded and checked.

A vendor lives in ``gems/runtime/backend/_<name>/``; its ``__init__.py`` defines ``vendor_info``
(a :class:`VendorInfoBase`), ``capabilities`` (a :class:`Capabilities`) and optionally
``base_vendor`` (the vendor whose configs and operator overrides it inherits), ``load_device(info)``
(makes the selected vendor's out-of-tree device, ``info.device_name``, known to torch, such as
importing its torch plugin; runs before gems checks that torch sees the device), ``activate()``
(work that must happen before any kernel is defined, such as turning the Triton interpreter on) and
``device_gaps`` ({operator: {variant, "variant/dtype" or "*" (every case): reason}}: conformance cases the
device cannot pass, reported as known failures).
"""

from __future__ import annotations

import enum
import importlib
import keyword
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import torch

BACKEND_DIR = Path(__file__).parent / "backend"
DEFAULT_VENDOR = "interpreter"
VENDOR_NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")

# Where a device type has a dispatch key of its own; anything else is an out-of-tree device.
_DISPATCH_KEY_BY_DEVICE = {"cuda": "CUDA", "cpu": "CPU", "xpu": "XPU", "mps": "MPS", "hpu": "HPU"}


class VendorError(RuntimeError):
    """A vendor cannot be selected or loaded; the message says what to do."""


class Autograd(enum.Enum):
    """How an operator override takes part in autograd."""

    enable = "enable"  # the function brings its own backward: registered under Autograd<key>
    disable = "disable"  # registered under the backend key; ATen's derivative formula drives backward


@dataclass(frozen=True)
class VendorInfoBase:
    vendor_name: str
    device_name: str  # the torch device type tensors live on: "cuda", "cpu", "foo"...
    device_query_cmd: str | None  # a shell command that succeeds only where the device is present
    dispatch_key: str | None = None  # None: the key torch uses for device_name

    @property
    def key(self) -> str:
        if self.dispatch_key:
            return self.dispatch_key
        return _DISPATCH_KEY_BY_DEVICE.get(self.device_name, "PrivateUse1")


@dataclass(frozen=True)
class Capabilities:
    """What a vendor's device and toolchain can do; tests and reports read it."""

    dtypes: frozenset = field(
        default_factory=lambda: frozenset(
            {
                torch.float16, torch.bfloat16, torch.float32, torch.float64,
                torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8, torch.bool,
            }
        )
    )
    # Several autotune configs per kernel need a benchmarker (a real device).
    multi_config_autotune: bool = True
    # Kernels run by a Python emulator call torch ops themselves; those must reach ATen.
    kernels_call_torch: bool = False
    # ATen has kernels on this device (False for the simulated device): conformance compares with
    # ATen's own answer there and gems-perf times ATen there.
    aten_kernels: bool = True
    # ATen's maximum/minimum/clamp/relu on this device order -0.0 below +0.0 (CUDA's fmaxf/fminf:
    # maximum(+0.0, -0.0) is +0.0 whichever operand holds it); CPU ATen lets one operand win the tie.
    # Kernels follow the device's ATen, whose zero signs conformance compares.
    ordered_zeros: bool = False
    notes: tuple = ()  # human-readable limits, copied into reports

    def supports(self, dtype: torch.dtype) -> bool:
        return dtype in self.dtypes


def known_vendors() -> list[str]:
    return sorted(p.name[1:] for p in BACKEND_DIR.glob("_*") if (p / "__init__.py").is_file())


def check_vendor_name(name: str) -> None:
    if keyword.iskeyword(name) or keyword.issoftkeyword(name):
        raise VendorError(f"invalid vendor name {name!r}: it is a Python keyword, and a vendor's name is a Python "
                          f"module name (gems.runtime.backend._{name}); pick another, such as {name}_dev")
    if not VENDOR_NAME_RE.match(name):
        raise VendorError(
            f"invalid vendor name {name!r}: use lower-case letters, digits and '_', starting with a letter"
        )


def import_backend_module(name: str):
    """Import ``gems.runtime.backend._<name>``; unknown names list the known vendors."""
    check_vendor_name(name)
    if name not in known_vendors():
        raise VendorError(
            f"unknown vendor {name!r}; known vendors: {', '.join(known_vendors())}. "
            f"Create a new one with: gems-scaffold --vendor {name}"
        )
    try:
        return importlib.import_module(f"gems.runtime.backend._{name}")
    except Exception as exc:
        path = BACKEND_DIR / f"_{name}" / "__init__.py"
        raise VendorError(f"vendor {name!r} failed to import from {path}: {exc!r}") from exc


def run_device_query(info: VendorInfoBase) -> tuple[bool, str]:
    """Run the vendor's device query; return (found, why-not)."""
    cmd = info.device_query_cmd
    if not cmd:
        return True, ""
    program = cmd.split()[0]
    if shutil.which(program) is None:
        return False, f"`{cmd}` cannot run: {program!r} is not on PATH (exit status 127)"
    try:
        proc = subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        return False, f"`{cmd}` did not answer within 30 s"
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or [""]
        return False, f"`{cmd}` failed with exit status {proc.returncode}: {tail[0]}"
    return True, ""


def check_torch_device(info: VendorInfoBase) -> tuple[bool, str]:
    """Does this torch build see the vendor's device type?"""
    if info.device_name == "cpu":
        return True, ""
    module = getattr(torch, info.device_name, None)
    is_available = getattr(module, "is_available", None)
    if is_available is None or not is_available():
        return False, f"torch {torch.__version__} sees no '{info.device_name}' device"
    return True, ""
