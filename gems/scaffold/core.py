"""Creating a vendor backend from vendor_template/: checks, rendering, and an all-or-nothing write.

:func:`plan` checks the request and renders every file in memory (nothing touches the disk);
:func:`write` stages the files beside their targets and renames them into place, undoing every step
if any fails or the run is interrupted, so a vendor directory is either whole or absent.
"""

from __future__ import annotations

import importlib.util
import json
import re
import secrets
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

import yaml

import gems
from gems.runtime.vendor import VendorError, VendorInfoBase, check_vendor_name
from gems.scaffold.presets import PRESETS, SOURCE

# Vendors that ship with gems: never replaced, not even with --force.
BUILTIN_VENDORS = ("interpreter", "nvidia", "sim")
MARKER = "scaffold.yaml"  # written into every scaffolded vendor; --force replaces only such directories

# Template file (relative to vendor_template/) -> file it becomes inside its target.
BACKEND_TEMPLATES = {
    "backend/__init__.py.tmpl": "__init__.py",
    "backend/heuristics_config_utils.py.tmpl": "heuristics_config_utils.py",
    "backend/tune_configs.yaml.tmpl": "tune_configs.yaml",
    "backend/conformance_overrides.yaml.tmpl": "conformance_overrides.yaml",
    "backend/README.md.tmpl": "README.md",
    "backend/ops/__init__.py.tmpl": "ops/__init__.py",
    "backend/ops/example.py.tmpl": "ops/example.py",
}
WORKFLOW_TEMPLATE = "ci/workflow.yml.tmpl"
TEMPLATES = (*BACKEND_TEMPLATES, WORKFLOW_TEMPLATE)

_PLACEHOLDER = re.compile(r"\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}")
_DEVICE_RE = re.compile(r"^[a-z][a-z0-9_]*$")


class ScaffoldError(RuntimeError):
    """The scaffold was refused or failed; nothing was written. The message says why and what to do."""


@dataclass
class Target:
    """One thing the scaffold puts in place: a directory of files, or a single file."""

    path: Path
    files: dict[str, str]  # relative path ("" for a single-file target) -> text
    replace: bool = False  # an existing one is replaced (--force)
    keep: bool = False  # it exists and is left as it is

    @property
    def is_dir(self) -> bool:
        return "" not in self.files


@dataclass
class Plan:
    vendor: str
    base: str
    device_name: str
    dispatch_key: str  # the key in effect
    query_cmd: str | None
    root: Path
    targets: list[Target] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def paths(self) -> list[tuple[str, Path]]:
        """(verb, file) for every file the plan creates, replaces or keeps."""
        out = []
        for target in self.targets:
            if target.keep:
                out.append(("keep", target.path))
                continue
            verb = "replace" if target.replace else "create"
            out.extend((verb, target.path / rel if rel else target.path) for rel in sorted(target.files))
        return out


def locate() -> tuple[Path, Path]:
    """(backend directory of the gems package in use, repository root that holds reports/ and ci/).

    An editable install is a source checkout: its root is the folder with pyproject.toml above the
    package. A gems installed from a wheel has none; then the current directory is the root.
    """
    package = Path(gems.__file__).resolve().parent
    root = package.parent if (package.parent / "pyproject.toml").is_file() else Path.cwd()
    return package / "runtime" / "backend", root


def template_dir(root: Path) -> Path:
    """vendor_template/ of a source checkout, else the copy shipped inside the package."""
    candidates = [root / "vendor_template", Path(__file__).resolve().parent / "vendor_template"]
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    raise ScaffoldError(
        "the vendor templates are missing from this installation: looked for "
        + " and ".join(str(c) for c in candidates)
        + ". Restore vendor_template/ (git checkout vendor_template) or reinstall gems."
    )


def known_vendors(backend_dir: Path) -> list[str]:
    return sorted(p.name[1:] for p in backend_dir.glob("_*") if (p / "__init__.py").is_file())


def check_name(vendor: str) -> None:
    """Refuse a vendor name that could not be a backend package, with the reason."""
    if not vendor:
        raise ScaffoldError("the vendor name is empty")
    if "/" in vendor or "\\" in vendor or vendor.startswith((".", "~")) or Path(vendor).is_absolute():
        raise ScaffoldError(
            f"vendor name {vendor!r} would write outside gems/runtime/backend/: give a plain name such as 'acme'"
        )
    if not vendor.isidentifier():
        raise ScaffoldError(
            f"vendor name {vendor!r} is not a valid Python identifier: the vendor becomes the package "
            f"gems.runtime.backend._<name>; use lower-case letters, digits and '_', starting with a letter"
        )
    try:
        check_vendor_name(vendor)  # the rule vendor selection applies (lower case, no keywords)
    except VendorError as exc:
        raise ScaffoldError(str(exc)) from None


def check_dispatch_key(key: str) -> None:
    import torch

    members = torch._C.DispatchKey.__members__
    # A backend key is one with an Autograd<key> twin; operators register under both.
    backend_keys = [k for k in members if f"Autograd{k}" in members and k != "NestedTensor"]
    if key not in backend_keys:
        raise ScaffoldError(f"--dispatch-key {key!r} is not a backend dispatch key of torch; "
                            f"use one of {', '.join(backend_keys)} (PrivateUse1 for an out-of-tree device)")


def _base_info(backend_dir: Path, base: str) -> VendorInfoBase:
    """The base vendor's VendorInfoBase, read from its file without selecting or activating it."""
    path = backend_dir / f"_{base}" / "__init__.py"
    if not path.is_file():
        raise ScaffoldError(f"--base {base!r}: no such vendor in {backend_dir}; "
                            f"known vendors: {', '.join(known_vendors(backend_dir)) or 'none'}")
    writes_bytecode, sys.dont_write_bytecode = sys.dont_write_bytecode, True  # reading leaves no __pycache__
    try:
        spec = importlib.util.spec_from_file_location(f"gems_scaffold_base_{base}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except Exception as exc:
        raise ScaffoldError(f"--base {base!r}: {path} failed to import: {exc!r}") from exc
    finally:
        sys.dont_write_bytecode = writes_bytecode
    info = getattr(module, "vendor_info", None)
    if not isinstance(info, VendorInfoBase) or info.vendor_name != base:
        raise ScaffoldError(f"--base {base!r}: {path} does not define vendor_info = VendorInfoBase("
                            f"vendor_name={base!r}, ...)")
    return info


def render(text: str, values: dict, where: str) -> str:
    """Replace each ``{{name}}``; an unknown name is an error naming the template."""
    unknown = sorted({m.group(1) for m in _PLACEHOLDER.finditer(text)} - set(values))
    if unknown:
        shown = ", ".join("{{" + name + "}}" for name in unknown)
        raise ScaffoldError(f"template {where}: unknown placeholder(s) {shown}; known: {', '.join(sorted(values))}")
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], text)


def _check_rendered(name: str, text: str, where: str) -> None:
    """A template that renders to broken Python or YAML stops the scaffold before anything is written."""
    try:
        if name.endswith(".py"):
            compile(text, name, "exec")
        elif name.endswith((".yaml", ".yml")):
            yaml.safe_load(text)
    except (SyntaxError, yaml.YAMLError) as exc:
        raise ScaffoldError(f"template {where} renders to an invalid {Path(name).suffix} file: {exc}") from exc


def _read_templates(templates: Path) -> dict[str, str]:
    texts = {}
    for rel in TEMPLATES:
        path = templates / rel
        if not path.is_file():
            raise ScaffoldError(f"template file {rel} is missing from this installation (looked in {templates}); "
                                f"restore it (git checkout vendor_template) or reinstall gems")
        texts[rel] = path.read_text()
    return texts


def plan(vendor: str, *, base: str = "nvidia", device_name: str | None = None, query_cmd: str | None = None,
         dispatch_key: str | None = None, force: bool = False, backend_dir: Path | None = None,
         root: Path | None = None, templates: Path | None = None) -> Plan:
    """Check the request and render every file; touches nothing on disk.

    device_name, query_cmd, dispatch_key: None takes the base vendor's where the device is the
    base's; query_cmd "" means no query command (the vendor is then only chosen explicitly).
    """
    check_name(vendor)
    default_backend_dir, default_root = locate()
    backend_dir = Path(backend_dir or default_backend_dir)
    root = Path(root or default_root)
    if vendor in BUILTIN_VENDORS:
        raise ScaffoldError(f"vendor {vendor!r} is built into gems and cannot be scaffolded or replaced "
                            f"(not even with --force); pick another name")
    target = backend_dir / f"_{vendor}"
    replace = False
    if target.exists():
        if not force:
            raise ScaffoldError(f"vendor {vendor!r} already exists at {target}; pick another name, "
                                f"or pass --force to replace a vendor that gems-scaffold made")
        if not (target / MARKER).is_file():
            raise ScaffoldError(f"{target} was not made by gems-scaffold (it has no {MARKER}); --force replaces "
                                f"only scaffolded vendors. Move it away yourself if you mean to replace it")
        replace = True
    try:
        check_name(base)
    except ScaffoldError as exc:
        raise ScaffoldError(f"--base: {exc}") from None
    if base == vendor:
        raise ScaffoldError(f"--base {base!r}: a vendor cannot be its own base")
    base_info = _base_info(backend_dir, base)

    preset_notes = []
    preset = PRESETS.get(vendor)
    if preset is not None and (device_name, query_cmd, dispatch_key) == (None, None, None):
        device_name, query_cmd, dispatch_key = preset.device_name, preset.query_cmd, preset.dispatch_key
        preset_notes.append(f"device {device_name}, query `{query_cmd}` and dispatch key {dispatch_key} are "
                            f"the known facts for {vendor} ({SOURCE}); pass --device-name, --query-cmd and "
                            f"--dispatch-key to set them yourself")
        if preset.unverified:
            preset_notes.append(f"not verified for {vendor}: {preset.unverified}")
    device_name = device_name or base_info.device_name
    if not _DEVICE_RE.match(device_name):
        raise ScaffoldError(f"--device-name {device_name!r}: give a torch device type such as 'cuda' or 'cpu' "
                            f"(lower case, no index)")
    same_device = device_name == base_info.device_name
    if dispatch_key is None and same_device:
        dispatch_key = base_info.dispatch_key
    if dispatch_key is not None:
        check_dispatch_key(dispatch_key)
    if query_cmd is None:
        query_cmd = base_info.device_query_cmd if same_device else None
    query_cmd = (query_cmd or "").strip() or None
    if query_cmd and ("\n" in query_cmd or "\r" in query_cmd):
        raise ScaffoldError("--query-cmd must be a single line")
    info = VendorInfoBase(vendor, device_name, query_cmd, dispatch_key)

    values = {
        "vendor": vendor, "base": base, "device_name": device_name,
        "query_cmd": query_cmd or "none", "query_cmd_py": _py_literal(query_cmd),
        "dispatch_key": info.key, "dispatch_key_py": _py_literal(dispatch_key),
    }
    texts = _read_templates(Path(templates) if templates else template_dir(root))
    backend_files = {}
    for rel, dest in BACKEND_TEMPLATES.items():
        backend_files[dest] = render(texts[rel], values, rel)
        _check_rendered(dest, backend_files[dest], rel)
    backend_files[MARKER] = _marker(vendor, base, device_name, query_cmd, dispatch_key)
    workflow = render(texts[WORKFLOW_TEMPLATE], values, WORKFLOW_TEMPLATE)
    _check_rendered("workflow.yml", workflow, WORKFLOW_TEMPLATE)

    result = Plan(vendor, base, device_name, info.key, query_cmd, root)
    result.notes += preset_notes
    result.targets.append(Target(target, backend_files, replace=replace))
    reports = root / "reports" / vendor
    result.targets.append(Target(reports, {".gitkeep": ""}, keep=reports.exists()))
    workflow_path = root / "ci" / "workflows" / f"{vendor}.yml"
    if workflow_path.exists() and not force:
        raise ScaffoldError(f"{workflow_path} already exists; pass --force to replace it")
    result.targets.append(Target(workflow_path, {"": workflow}, replace=workflow_path.exists()))
    if result.targets[1].keep:
        result.notes.append(f"{reports} exists and is kept as it is (baselines are never replaced)")
    if query_cmd and query_cmd == base_info.device_query_cmd:
        result.notes.append(f"vendor {vendor!r} answers to the same device query as {base!r} (`{query_cmd}`): "
                            f"automatic detection may pick either; pass --query-cmd with your device's tool, "
                            f"or select the vendor explicitly (GEMS_VENDOR={vendor})")
    if not query_cmd:
        result.notes.append(f"vendor {vendor!r} has no device query, so detection never picks it: select it "
                            f"with GEMS_VENDOR={vendor} or --vendor {vendor}")
    return result


def _py_literal(value: str | None) -> str:
    """None, or a double-quoted Python string (a JSON string is one), as the repository's style writes it."""
    return "None" if value is None else json.dumps(value)


def _marker(vendor, base, device_name, query_cmd, dispatch_key) -> str:
    record = {"vendor": vendor, "base": base, "device_name": device_name, "query_cmd": query_cmd,
              "dispatch_key": dispatch_key, "gems": gems.__version__}
    return ("# How gems-scaffold made this vendor. `gems-scaffold --force` replaces only directories with this file.\n"
            + yaml.safe_dump(record, sort_keys=False))


def _write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def write(plan: Plan) -> list[Path]:
    """Put the plan's targets in place, all or nothing; returns the files written.

    Each target is first written to a hidden staging path beside it (a name no vendor lookup
    matches), then renamed into place; a replaced target is renamed aside until all are in place.
    On any error, or Ctrl-C, every step taken is undone; an OSError comes back as a ScaffoldError.
    """
    token = secrets.token_hex(4)
    made_dirs: list[Path] = []  # parent folders this run created, removed again on failure
    staged: list[tuple[Path, Target]] = []
    placed: list[tuple[Path, Path | None]] = []  # (final path, where the replaced original waits)
    try:
        for target in plan.targets:
            if target.keep:
                continue
            parent = target.path.parent
            missing = [p for p in (parent, *parent.parents) if not p.exists()]
            parent.mkdir(parents=True, exist_ok=True)
            made_dirs.extend(missing)
            stage = parent / f".{target.path.name}.scaffold-{token}"
            staged.append((stage, target))
            for rel, text in target.files.items():
                _write_text(stage / rel if rel else stage, text)
        for stage, target in staged:
            aside = None
            if target.path.exists():
                aside = target.path.parent / f".{target.path.name}.scaffold-old-{token}"
                target.path.rename(aside)
            placed.append((target.path, aside))
            stage.rename(target.path)
    except BaseException as exc:
        for final, aside in reversed(placed):
            _remove(final)
            if aside is not None and aside.exists():
                aside.rename(final)
        for stage, _ in staged:
            _remove(stage)
        for folder in sorted(made_dirs, key=lambda p: len(p.parts), reverse=True):
            if folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
        if isinstance(exc, OSError):
            raise ScaffoldError(f"writing vendor {plan.vendor!r} failed: {exc}; every file written was removed "
                                f"again") from exc
        raise
    for _, aside in placed:
        if aside is not None:
            _remove(aside)
    return [path for verb, path in plan.paths() if verb != "keep"]


def scaffold(vendor: str, **options) -> tuple[Plan, list[Path]]:
    """Plan and write in one call (the API under ``gems-scaffold``)."""
    made = plan(vendor, **options)
    return made, write(made)
