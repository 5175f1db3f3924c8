"""Choosing the vendor for this process and loading its backend (configs, overrides, capabilities).

Order: ``gems.select_vendor(name)``, else the ``GEMS_VENDOR`` environment variable, else the first
vendor whose device query succeeds, else the ``interpreter`` vendor. A vendor named explicitly that
cannot run raises; one found by detection that fails to load is skipped with a warning.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from gems.runtime import configs
from gems.runtime.vendor import (
    DEFAULT_VENDOR,
    Autograd,
    Capabilities,
    VendorError,
    VendorInfoBase,
    check_torch_device,
    import_backend_module,
    known_vendors,
    run_device_query,
)


@dataclass
class Backend:
    """A loaded vendor: its declared info plus everything inherited from its base vendors."""

    name: str
    info: VendorInfoBase
    capabilities: Capabilities
    directory: Path
    base: Backend | None
    _module: object = field(repr=False)
    _tune_configs: dict | None = field(default=None, repr=False)
    _heuristics: dict | None = field(default=None, repr=False)

    @property
    def device(self) -> str:
        return self.info.device_name

    @property
    def dispatch_key(self) -> str:
        return self.info.key

    def chain(self):
        """This vendor, then its base, then the base's base..."""
        backend = self
        while backend is not None:
            yield backend
            backend = backend.base

    def check_tune_configs(self) -> None:
        """Read and check the ``tune_configs.yaml`` of every vendor in the chain (raises VendorError)."""
        for backend in self.chain():
            if backend._tune_configs is None:
                backend._tune_configs = configs.load_tune_configs(backend.directory / "tune_configs.yaml")

    def tune_configs(self, key: str) -> list:
        """``triton.Config`` list for an operator key, from the nearest vendor in the chain that has it;
        only its first config where the device cannot benchmark (``multi_config_autotune`` false)."""
        self.check_tune_configs()
        for backend in self.chain():
            if key in backend._tune_configs:
                found = configs.triton_configs(backend._tune_configs[key])
                return found if self.capabilities.multi_config_autotune else found[:1]
        names = " -> ".join(b.name for b in self.chain())
        raise VendorError(f"no tune config for key {key!r} in tune_configs.yaml of vendors {names}")

    def autotune(self, key: str, arg_keys: list[str], **kwargs):
        """``@triton.autotune`` decorator over this vendor's configs for ``key``, retuned when the
        kernel arguments named in ``arg_keys`` (and the tensors' dtypes) change."""
        return configs.autotune(self.tune_configs(key), arg_keys, **kwargs)

    def heuristics(self, key: str) -> dict:
        """``triton.heuristics`` rules for an operator key, nearest vendor first."""
        for backend in self.chain():
            if backend._heuristics is None:
                backend._heuristics = configs.load_vendor_heuristics(backend.directory)
            if key in backend._heuristics:
                return backend._heuristics[key]
        names = " -> ".join(b.name for b in self.chain())
        raise VendorError(f"no heuristics for key {key!r} in heuristics_config_utils.py or heuristics/ of vendors "
                          f"{names}")

    def specific_ops(self) -> dict[str, tuple]:
        """ATen overload -> (function, Autograd), base vendors' overrides first, own ones last."""
        table = {}
        for backend in reversed(list(self.chain())):
            ops = _ops_module(backend)
            for entry in ops.get_specific_ops() if hasattr(ops, "get_specific_ops") else ():
                aten_name, fn, autograd = _check_specific_op(backend, entry)
                table[aten_name] = (fn, autograd)
        return table

    def device_gaps(self) -> dict[str, dict[str, str]]:
        """{operator: {variant or "variant/dtype": reason}}: conformance cases this vendor's device cannot pass
        (``device_gaps`` of its module and its bases', a vendor's own entries last)."""
        gaps = {}
        for backend in reversed(list(self.chain())):
            for op, variants in getattr(backend._module, "device_gaps", {}).items():
                gaps.setdefault(op, {}).update(variants)
        return gaps

    def device_gap(self, op: str, variant: str, dtype) -> str | None:
        """The declared reason why this device cannot pass ``op``'s ``variant`` in ``dtype`` (keys "variant"
        or "variant/dtype", "*" for every case; perf checks use the variant "perf"), or None."""
        variants = self.device_gaps().get(op, {})
        return (variants.get(f"{variant}/{str(dtype).removeprefix('torch.')}") or variants.get(variant)
                or variants.get("*"))

    def unused_ops(self) -> set[str]:
        """ATen overloads left to ATen on this vendor (its own list and its bases')."""
        unused = set()
        for backend in self.chain():
            ops = _ops_module(backend)
            unused.update(ops.get_unused_ops() if hasattr(ops, "get_unused_ops") else ())
        return unused


def _ops_module(backend: Backend):
    import importlib

    try:
        return importlib.import_module(f"gems.runtime.backend._{backend.name}.ops")
    except Exception as exc:
        raise VendorError(f"{backend.directory / 'ops' / '__init__.py'}: failed to import: {exc!r}") from exc


def _check_specific_op(backend: Backend, entry) -> tuple:
    where = f"{backend.directory / 'ops' / '__init__.py'}: get_specific_ops()"
    if not (isinstance(entry, tuple) and len(entry) == 3):
        raise VendorError(f"{where}: expected (aten_name, function, Autograd.enable|disable), got {entry!r}")
    aten_name, fn, autograd = entry
    if not isinstance(aten_name, str) or not callable(fn) or not isinstance(autograd, Autograd):
        raise VendorError(f"{where}: bad entry {entry!r}: expected (str, callable, Autograd)")
    return aten_name, fn, autograd


def load_backend(name: str, _seen: tuple = ()) -> Backend:
    """Import a vendor and its base chain without selecting it (no device query, no activation)."""
    if name in _seen:
        raise VendorError(f"vendor base chain loops: {' -> '.join(_seen + (name,))}")
    module = import_backend_module(name)
    info = getattr(module, "vendor_info", None)
    if not isinstance(info, VendorInfoBase):
        raise VendorError(f"{module.__file__}: must define vendor_info = VendorInfoBase(...)")
    if info.vendor_name != name:
        raise VendorError(f"{module.__file__}: vendor_info.vendor_name is {info.vendor_name!r}, expected {name!r}")
    base_name = getattr(module, "base_vendor", None)
    base = load_backend(base_name, _seen + (name,)) if base_name else None
    capabilities = getattr(module, "capabilities", None) or (base.capabilities if base else Capabilities())
    return Backend(name, info, capabilities, Path(module.__file__).parent, base, module)


def expectation_chain(name: str) -> tuple[str, ...]:
    """The vendors whose declared known failures and skips ``name`` inherits: itself, then its base chain as
    far as the bases have ATen kernels where it has them (those declarations are about ATen's answers on the
    device; a device with no ATen, like the simulated one, has its own declared gaps instead). An unknown
    name is its own chain."""
    try:
        backend = _current if _current is not None and _current.name == name else load_backend(name)
    except VendorError:
        return (name,)
    aten = backend.capabilities.aten_kernels
    names = []
    for member in backend.chain():
        if member.capabilities.aten_kernels != aten:
            break
        names.append(member.name)
    return tuple(names)


def check_available(backend: Backend) -> None:
    """Raise with the command, its exit status and what to check if the vendor's device is absent."""
    found, why = run_device_query(backend.info)
    if found:
        found, why = check_torch_device(backend.info)
    if not found:
        raise VendorError(
            f"vendor {backend.name!r} was selected but its device is not usable: {why}. "
            f"Check that the '{backend.info.device_name}' device and its driver are installed and visible "
            f"to this process, or select another vendor (GEMS_VENDOR=..., known: {', '.join(known_vendors())})."
        )


def detect_vendor() -> tuple[str, str]:
    """(vendor, why): the first vendor (other than the interpreter) whose device is present, else the
    interpreter."""
    for name in known_vendors():
        if name == DEFAULT_VENDOR:
            continue
        try:
            backend = load_backend(name)
            backend.check_tune_configs()
        except VendorError as exc:
            warnings.warn(f"skipping vendor {name!r} during detection: {exc}", stacklevel=2)
            continue
        if backend.info.device_query_cmd and run_device_query(backend.info)[0] and check_torch_device(backend.info)[0]:
            return name, f"detected: `{backend.info.device_query_cmd}` succeeded"
    return DEFAULT_VENDOR, "the default: no other vendor's device was detected"


_current: Backend | None = None
_why = ""


def current() -> Backend:
    """The vendor of this process, chosen and activated on first use."""
    if _current is None:
        name = os.environ.get("GEMS_VENDOR") or None
        if name:
            try:
                select(name, why="the GEMS_VENDOR environment variable")
            except VendorError as exc:
                raise VendorError(f"the GEMS_VENDOR environment variable: {exc}") from exc
        else:
            select(*detect_vendor(), explicit=False)
    return _current


def selected_because() -> str:
    """Why the current vendor was chosen ("the GEMS_VENDOR environment variable", "detected: ...")."""
    return _why


def select(name: str, why: str = "selected explicitly", explicit: bool = True) -> Backend:
    """Make ``name`` the vendor of this process. Kernels are compiled for one vendor per process.
    ``why`` says what chose it, for the messages that name the vendor."""
    global _current, _why
    if _current is not None:
        if _current.name == name:
            return _current
        raise VendorError(
            f"vendor {_current.name!r} is already active in this process; the vendor is fixed once kernels "
            f"are defined. Start a new process with GEMS_VENDOR={name}."
        )
    backend = load_backend(name)
    for member in reversed(list(backend.chain())):
        load_device = getattr(member._module, "load_device", None)
        if load_device is not None:  # an out-of-tree device's torch plugin: torch sees the device after it
            load_device(backend.info)
    if explicit:
        check_available(backend)
    backend.check_tune_configs()  # a malformed file fails here, before any kernel is defined
    for member in reversed(list(backend.chain())):
        activate = getattr(member._module, "activate", None)
        if activate is not None:
            activate()
    _current, _why = backend, why
    return backend
