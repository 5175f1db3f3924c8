"""The layout of gems/ops: a file per operator, named after it, within a size cap; operator modules
keep test code out of their imports; no import circles in gems (docs/operators.md says why)."""

import ast
import importlib
import pkgutil
from pathlib import Path

import gems.ops

OPS_DIR = Path(gems.ops.__file__).parent
GEMS_DIR = OPS_DIR.parent
MAX_LINES = 400  # one operator with its kernels, overloads, samples and declaration fits well within it

# Files that still import gems.testing at module level, each with the reason it is allowed for now.
TESTING_IMPORT_ALLOWED = {
    "reduction/sum.py": "the reductions work in flight owns it; to reference its generators with gems.spec.lazy",
    "reduction/softmax.py": "the reductions work in flight owns it; to reference its generators with gems.spec.lazy",
}


def _op_files():
    return sorted(p for p in OPS_DIR.rglob("*.py"))


def test_every_file_under_gems_ops_is_within_the_size_cap():
    lines = {str(p.relative_to(OPS_DIR)): len(p.read_text().splitlines()) for p in _op_files()}
    too_long = {name: n for name, n in lines.items() if n > MAX_LINES}
    assert not too_long, f"files over {MAX_LINES} lines (split them per operator or move family helpers): {too_long}"


def test_operators_live_in_family_packages():
    loose = [p.name for p in OPS_DIR.glob("*.py") if p.name != "__init__.py"]
    assert not loose, f"modules directly under gems/ops (put them in a family package): {loose}"


def _modules():
    for info in pkgutil.walk_packages(gems.ops.__path__, "gems.ops."):
        if not info.name.rpartition(".")[2].startswith("_"):
            yield importlib.import_module(info.name)


def test_each_operator_is_declared_in_a_file_named_after_it():
    misplaced = []
    for module in _modules():
        specs = getattr(module, "SPECS", ())
        file_name = module.__name__.rpartition(".")[2]
        if len(specs) == 1 and specs[0].name != file_name:
            misplaced.append(f"{specs[0].name} in {module.__name__}")
        if len(specs) > 1:
            # A family file holding several operators must name each in its docstring, saying why they share it.
            doc = module.__doc__ or ""
            misplaced += [f"{s.name} in {module.__name__} (not named in its docstring)" for s in specs
                          if s.name not in doc]
    assert not misplaced, f"operators not in a file named after them: {misplaced}"


def _module_level_imports(path):
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.ImportFrom) and node.module:
            yield node.module
        elif isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)


def test_operator_modules_do_not_import_test_code():
    """Registering operators (gems.enable()) must load no sample generators: declarations reference them
    with gems.spec.lazy / lazy_perf, and operator-specific samples import them inside their functions."""
    offenders = [str(p.relative_to(OPS_DIR)) for p in _op_files()
                 if str(p.relative_to(OPS_DIR)) not in TESTING_IMPORT_ALLOWED
                 and any(m.startswith("gems.testing") for m in _module_level_imports(p))]
    assert not offenders, f"operator modules importing gems.testing at module level: {offenders}"


def test_gems_has_no_import_cycle():
    modules = {}
    for path in GEMS_DIR.rglob("*.py"):
        parts = path.relative_to(GEMS_DIR.parent).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph = {}
    for name, path in modules.items():
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):  # imports inside functions count too
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("gems"):
                submodules = [f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in modules]
                deps.update(submodules or [node.module])
            elif isinstance(node, ast.Import):
                deps.update(a.name for a in node.names if a.name.startswith("gems"))
        graph[name] = {d for d in deps if d in modules and d != name}
    state, cycles = {}, []

    def visit(name, path):
        state[name] = "open"
        for dep in sorted(graph[name]):
            if state.get(dep) == "open":
                cycles.append(" -> ".join(path[path.index(dep):] + [dep]))
            elif dep not in state:
                visit(dep, path + [dep])
        state[name] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert not cycles, f"import cycles: {cycles}"
