"""Every Triton kernel and helper in gems compiles on a GPU as it runs in the interpreter: a @triton.jit function
reads only the globals compiled Triton accepts. The interpreter takes any global; the GPU compiler refuses a
plain number, string or container (NameError: "Cannot access global variable ... from within @jit'ed
function") unless it is a ``tl.constexpr``."""

import ast
import importlib
import inspect
import pkgutil
import textwrap

import triton
import triton.language as tl
from triton.runtime.interpreter import InterpretedFunction
from triton.runtime.jit import JITFunction

REFUSED = (bool, int, float, str, tuple, list, dict, set)
# @triton.jit makes an InterpretedFunction under TRITON_INTERPRET=1 (as in CI), a JITFunction on a GPU.
KERNEL_TYPES = (JITFunction, InterpretedFunction)


def jit_functions():
    for package in ("gems.ops", "gems.codegen", "gems.runtime"):
        root = importlib.import_module(package)
        for info in pkgutil.walk_packages(root.__path__, f"{package}."):
            module = importlib.import_module(info.name)
            for name, value in vars(module).items():
                if isinstance(value, KERNEL_TYPES) and value.fn.__module__ == module.__name__:
                    yield f"{module.__name__}.{name}", value


def local_names(tree) -> set:
    names = {arg.arg for node in ast.walk(tree) if isinstance(node, ast.arguments)
             for arg in (*node.posonlyargs, *node.args, *node.kwonlyargs)}
    stored = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
    return names | stored


def refused_globals(fn) -> list:
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn.fn)))
    local = local_names(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in local:
            value = fn.fn.__globals__.get(node.id)
            if isinstance(value, REFUSED) and not isinstance(value, tl.constexpr):
                found.append(f"{node.id} = {value!r}")
    return sorted(set(found))


def test_kernels_read_only_globals_the_gpu_compiler_accepts():
    functions = dict(jit_functions())
    assert len(functions) > 200, "the walk found too few kernels: it no longer sees gems' modules"
    bad = {name: found for name, fn in functions.items() if (found := refused_globals(fn))}
    assert not bad, ("globals that compiled Triton refuses (wrap each in tl.constexpr):\n" +
                     "\n".join(f"  {name}: {', '.join(found)}" for name, found in sorted(bad.items())))


def test_the_check_finds_a_plain_float_global():
    namespace = {"triton": triton, "tl": tl, "SCALE": 2.0, "OK": tl.constexpr(2.0)}
    source = "@triton.jit\ndef scaled(x):\n    y = x * OK\n    return y * SCALE\n"
    path = "<kernel-sources-test>"
    import linecache
    linecache.cache[path] = (len(source), None, source.splitlines(True), path)
    exec(compile(source, path, "exec"), namespace)
    assert refused_globals(namespace["scaled"]) == ["SCALE = 2.0"]

