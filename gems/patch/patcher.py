"""gems.patch(model): walk a transformers model, give every module a table names (gems/patch/tables.py)
the fused forward of its kind when its configuration is one the kernel computes exactly, and report what
was patched and what was left, and why. gems.unpatch(model) gives every module its class's forward back.

A patched module carries its replacement as its own ``forward`` attribute (the class is untouched, so
other models of the class are not affected). A rotary entry also puts the fused rotary function in place
of the module-level function its attention calls (apply_rotary_pos_emb); that function keeps computing
the original for every caller but a patched attention module, and is put back when the last model that
needed it is unpatched.
"""

from __future__ import annotations

import functools
import types
from collections import Counter
from dataclasses import dataclass, field

import torch

from gems.patch import forwards
from gems.patch.tables import ARCHITECTURES, NOT_FUSED, entries_by_class

CHECKS = {
    "rms_norm": forwards.check_rms_norm,
    "gated_mlp": forwards.check_gated_mlp,
    "pre_norm_block": forwards.check_pre_norm_block,
    "skip_output": forwards.check_skip_output,
    "rotary": forwards.check_rotary,
    "linear_cross_entropy": forwards.check_linear_cross_entropy,
}
FUSED_OPS = {
    "rms_norm": "fused_rms_norm",
    "gated_mlp": "silu_and_mul / gelu_and_mul",
    "pre_norm_block": "fused_add_rms_norm / skip_layer_norm (residual add + norm)",
    "skip_output": "skip_layer_norm (residual add + layer norm)",
    "rotary": "apply_rotary_position_embedding (queries and keys)",
    "linear_cross_entropy": "linear_cross_entropy (when given labels with autograd recording)",
}
# torch.nn building blocks a report does not list as left: nothing to fuse in them alone.
_PLAIN = ("Linear", "Embedding", "Dropout", "ModuleList", "ModuleDict", "Sequential", "Identity", "Conv2d")
_installed: dict[str, list] = {}  # rotary function path -> [original, models using the fused one]


@dataclass
class PatchReport:
    """What gems.patch did: ``patched`` and ``left`` rows of (module path, class, fused op or why not)."""

    model_type: str
    known: bool  # the architecture has a table
    patched: list = field(default_factory=list)
    left: list = field(default_factory=list)

    def counts(self) -> dict:
        return dict(Counter(cls for _, cls, _ in self.patched))

    def __str__(self) -> str:
        head = (f"gems.patch: {self.model_type}" if self.known else
                f"gems.patch: no table for architecture {self.model_type!r}; modules recognised by class name only")
        lines = [head]
        for (cls, op), n in Counter((cls, op) for _, cls, op in self.patched).items():
            lines.append(f"  patched {n} x {cls} -> {op}")
        for (cls, why), n in Counter((cls, why) for _, cls, why in self.left).items():
            lines.append(f"  left    {n} x {cls}: {why}")
        if not self.patched:
            lines.append("  nothing patched")
        return "\n".join(lines)


@dataclass
class _State:
    report: PatchReport
    modules: list  # the modules whose forward was replaced
    functions: list  # rotary function paths installed for this model


def _replacement(module, entry):
    cls, options = type(module), entry.options
    if entry.kind == "rms_norm":
        return forwards.rms_norm_forward(cls, float(options.get("weight_offset", 0.0)))
    if entry.kind == "gated_mlp":
        return forwards.gated_mlp_forward(cls)
    if entry.kind == "pre_norm_block":
        return forwards.pre_norm_block_forward(cls, options["norm1"], options["attention"], options["norm2"],
                                               options["mlp"], options.get("dropout"))
    if entry.kind == "skip_output":
        return forwards.skip_output_forward(cls, options["dense"], options["dropout"], options["norm"])
    if entry.kind == "rotary":
        return forwards.rotary_attention_forward(cls)
    return forwards.linear_cross_entropy_forward(cls, options["body"], options["head"])


def _install_rotary(path: str) -> None:
    module, name, current = forwards.rotary_function(path)
    if path not in _installed:
        _installed[path] = [current, 0]
        setattr(module, name, forwards.fused_rotary_function(current))
    _installed[path][1] += 1


def _uninstall_rotary(path: str) -> None:
    if path in _installed:
        _installed[path][1] -= 1
        if _installed[path][1] <= 0:
            module, name, _ = forwards.rotary_function(path)
            setattr(module, name, _installed.pop(path)[0])


def patch(model: torch.nn.Module) -> PatchReport:
    """Patch ``model`` in place (see the module docstring); returns the report, also kept for unpatch.
    A model patched already is left as it is (its report is returned)."""
    state = getattr(model, "_gems_patch", None)
    if state is not None:
        return state.report
    config = getattr(model, "config", None)
    model_type = getattr(config, "model_type", type(model).__name__)
    known = model_type in ARCHITECTURES
    table = {e.cls: e for e in ARCHITECTURES[model_type]} if known else entries_by_class()
    report, patched, functions = PatchReport(model_type, known), [], []
    for path, module in model.named_modules():
        cls = type(module).__name__
        entry = table.get(cls)
        if entry is None:
            if cls in NOT_FUSED:
                report.left.append((path, cls, NOT_FUSED[cls]))
            elif not known and module is not model and not _plain(module):
                report.left.append((path, cls, "no table entry for this class"))
            continue
        why = CHECKS[entry.kind](module, entry.options, config)
        if why:
            report.left.append((path, cls, why))
            continue
        module.forward = types.MethodType(_replacement(module, entry), module)
        patched.append(module)
        if entry.kind == "rotary" and entry.options["function"] not in functions:
            functions.append(entry.options["function"])
            _install_rotary(entry.options["function"])
        report.patched.append((path, cls, FUSED_OPS[entry.kind]))
    model._gems_patch = _State(report, patched, functions)
    return report


def _plain(module) -> bool:
    """torch.nn's building blocks and parameterless leaves (activations): nothing a report lists as left."""
    leaf = not any(True for _ in module.children()) and not any(True for _ in module.parameters(recurse=False))
    return leaf or (type(module).__module__.startswith("torch.nn") and type(module).__name__ in _PLAIN)


def unpatch(model: torch.nn.Module) -> None:
    """Give every module gems.patch replaced its class's forward back (a model never patched: nothing)."""
    state = model.__dict__.pop("_gems_patch", None)
    if state is None:
        return
    for module in state.modules:
        replacement = module.__dict__.get("forward")
        if replacement is not None and hasattr(getattr(replacement, "__func__", None), forwards.MARK):
            del module.forward
    for path in state.functions:
        _uninstall_rotary(path)


def report_of(model: torch.nn.Module) -> PatchReport | None:
    state = getattr(model, "_gems_patch", None)
    return state.report if state is not None else None


def patch_class(cls: type) -> None:
    """Patch every model of ``cls`` built from now on (at the end of its __init__): for code that builds
    the model itself (``from_pretrained``, a trainer). ``unpatch_class(cls)`` stops it."""
    own = cls.__dict__.get("__init__")
    if own is not None and hasattr(own, forwards.MARK):
        return
    original = cls.__init__

    @functools.wraps(original)
    def __init__(self, *args, **kwargs):
        original(self, *args, **kwargs)
        if type(self) is cls:
            patch(self)

    setattr(__init__, forwards.MARK, own)  # the class's own __init__, or None where it inherits one
    cls.__init__ = __init__


def unpatch_class(cls: type) -> None:
    current = cls.__dict__.get("__init__")
    if current is None or not hasattr(current, forwards.MARK):
        return
    own = getattr(current, forwards.MARK)
    if own is None:
        del cls.__init__
    else:
        cls.__init__ = own
