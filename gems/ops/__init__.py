"""The operator library: ``gems/ops/<family>/<operator>.py``, each declaring ``SPECS``, a list of
:class:`gems.spec.OpSpec`.

Modules are found by walking the packages (names starting with "_" are skipped), so adding an operator
means adding a file; there is no second list to keep. A module without SPECS (a family's shared
helpers) is simply imported.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from gems.runtime import selection as _selection
from gems.spec import OpSpec

# Kernels are defined when their modules are imported, and the vendor decides how (the interpreter
# vendor must switch Triton to interpreting first), so the vendor is chosen before any op module loads.
_selection.current()


@cache
def all_specs() -> tuple[OpSpec, ...]:
    specs, owner_of = [], {}
    for module_info in sorted(pkgutil.walk_packages(__path__, f"{__name__}."), key=lambda m: m.name):
        if module_info.name.rpartition(".")[2].startswith("_"):
            continue
        module = importlib.import_module(module_info.name)
        for spec in getattr(module, "SPECS", ()):
            for overload in (*spec.impls, *spec.api):  # (composite_of names other operators' overloads)
                if overload in owner_of:
                    raise ValueError(f"ATen overload {overload!r} is declared by both {owner_of[overload]!r} "
                                     f"and {spec.name!r}")
                owner_of[overload] = spec.name
            specs.append(spec)
    names = [s.name for s in specs]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        raise ValueError(f"operator names declared twice: {sorted(duplicates)}")
    return tuple(sorted(specs, key=lambda s: s.name))


def names() -> list[str]:
    return [s.name for s in all_specs()]


def get(name: str) -> OpSpec:
    for spec in all_specs():
        if spec.name == name:
            return spec
    raise KeyError(name)


def implementations() -> dict:
    """ATen overload -> (implementation, owning operator name)."""
    return {overload: (fn, spec.name) for spec in all_specs() for overload, fn in spec.impls.items()}
