"""What the conformance samples reach: the quick suite under line and branch coverage.

    python -m gems.testing.coverage [--out DIR] [--append] [pytest arguments]
    python -m gems.testing.coverage conformance --quick --ops add,softmax -n 1     # a part of it

runs pytest with the arguments given (none: ``conformance --quick``) under coverage.py, branch coverage on,
xdist workers measured too, on the vendor GEMS_VENDOR names (default: the interpreter; CI measures the
simulated device's worked example, whose kernels also run as Python), and writes to DIR (default
``runs/coverage/``):

- ``coverage.md``: line and branch coverage of gems/ops (the target: 95% of lines, 90% of branches),
  gems/codegen and gems/native/record.py, then every operator module and codegen file with what no
  sample reaches: its missed lines and every missed branch (``line -> line``, ``-> exit`` when the
  function returns there), each with the source line where the branch starts;
- ``coverage.json``: coverage.py's JSON report of the same data.

Only conformance cases count: while a test outside ``conformance/`` runs (and in the processes it
starts), measuring is paused, so the numbers say what the samples reach, not what unit tests do. Under
the interpreter a kernel's body runs as Python, so its lines and branches count like any other (the
``tl.constexpr`` branches taken per specialization included). A path that no interpreter run can take
(a device-only branch, offsets past 2^31 elements) says why on its line, after
``# unreached on the interpreter:``: it is left out of the totals and listed with that reason (the
GPU's conformance covers it).
With ``--append`` the data of earlier runs in DIR is kept and the report covers them all, made from this
checkout or from a copy of it (the simulated device's worked example runs in a scratch copy): a copy's
files count as this checkout's. The exit status is pytest's; a report is written whatever it is.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import coverage
import pytest

ROOT = Path(__file__).resolve().parents[2]
# What is measured: the operators (kernels included), the pointwise generator, and the native layer's recording.
MEASURED = ("gems/ops", "gems/codegen", "gems/native/record.py")
TARGET = {"lines": 95.0, "branches": 90.0}  # of gems/ops
# A line that says why no interpreter run reaches it (a device-only path, offsets past 2^31 elements) is left
# out of the totals with its block (an `if` line: the whole if, its elif and else too) and listed with that
# reason. (The configuration names it as the regular expression `[#] unreached ...`: a line of an option that
# starts with `#` is a comment there.)
UNREACHED = "# unreached on the interpreter: "
_COVERAGE = (sys.executable, "-m", "coverage")


def _config(out: Path) -> Path:
    """A coverage.py configuration for the run (subprocesses, the xdist workers, measured alike). Its [paths]
    make another copy's gems/ (data appended from a scratch copy) this checkout's when the data is combined."""
    rc = out / "coveragerc"
    include = ", ".join(str(ROOT / m) + ("" if m.endswith(".py") else "/*") for m in MEASURED)
    rc.write_text(f"[run]\nbranch = True\nparallel = True\npatch = subprocess\n"
                  f"data_file = {_parts(out) / '.coverage'}\ninclude = {include}\n"
                  f"[paths]\ngems =\n    {ROOT / 'gems'}\n    */gems\n"
                  f"[report]\nexclude_also =\n    [#]{UNREACHED[1:]}\n")
    return rc


def _parts(out: Path) -> Path:
    """Where each measured process leaves its data file: apart from the combined ``out``/.coverage, since
    coverage.py's reports erase the process files beside the data file they read."""
    return out / "parts"


def vendor() -> str:
    """The vendor measured: one whose kernels run under Triton's interpreter (the interpreter, sim, or a vendor
    scaffolded on them)."""
    return os.environ.get("GEMS_VENDOR") or "interpreter"


def run(out: Path, pytest_args: list[str], append: bool = False) -> int:
    """pytest under coverage (this module its plugin); returns pytest's exit status. Each process leaves its own
    data file in ``out`` (combined by :func:`json_report`); ``append`` keeps those of earlier runs."""
    _parts(out).mkdir(parents=True, exist_ok=True)
    for old in [*out.glob(".coverage*"), *_parts(out).glob(".coverage*")]:
        if not append:
            old.unlink()
    rc = _config(out)
    env = {**os.environ, "GEMS_VENDOR": vendor()}
    command = [*_COVERAGE, "run", f"--rcfile={rc}", "-m", "pytest", "-p", "gems.testing.coverage",
               *(pytest_args or ["conformance", "--quick"])]
    return subprocess.run(command, cwd=ROOT, env=env).returncode


def _add_kernel_arcs(out: Path) -> None:
    """Triton's interpreter runs a kernel (or jit helper) compiled from its source from the ``def`` line on, the
    decorators left out, so the entry and exit arcs it records name the ``def`` line, where coverage.py's analysis
    starts a decorated function at its first decorator: without this, no kernel's last ``if`` or loop would ever be
    seen to leave the kernel. Those arcs are added again under the first decorator's line."""
    data = coverage.CoverageData(basename=str(out / ".coverage"))
    data.read()
    added = {}
    for name in data.measured_files():
        starts = {-line: -first for line, first in _decorated(name).items()}  # as arcs name them: negative
        arcs = set(data.arcs(name) or ())
        new = {(starts.get(a, a), starts.get(b, b)) for a, b in arcs} - arcs
        if new:
            added[name] = sorted(new)
    if added:
        data.add_arcs(added)


def _decorated(path: str) -> dict:
    """The ``def`` line -> the first decorator's line, of every decorated function in the file."""
    try:
        tree = ast.parse(Path(path).read_text())
    except (OSError, SyntaxError):
        return {}
    return {node.lineno: min(d.lineno for d in node.decorator_list) for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.decorator_list}


def combine(out: Path) -> None:
    """``out``/.coverage made afresh from every process's data file in ``out``/parts (kept: a later run may
    append), a copy's paths mapped onto this checkout's."""
    (out / ".coverage").unlink(missing_ok=True)
    subprocess.run([*_COVERAGE, "combine", "-q", "--keep", f"--rcfile={_config(out)}",
                    f"--data-file={out / '.coverage'}", str(_parts(out))], cwd=ROOT, check=True)


def json_report(out: Path) -> dict:
    """coverage.json from the data in ``out`` (the markers of unreached lines read as they are now)."""
    combine(out)
    _add_kernel_arcs(out)
    subprocess.run([*_COVERAGE, "json", "-q", f"--rcfile={_config(out)}", f"--data-file={out / '.coverage'}", "-o",
                    str(out / "coverage.json")], cwd=ROOT, check=True)
    return json.loads((out / "coverage.json").read_text())


# Variables through which a measured process has the processes it starts measured (``patch = subprocess``).
_SUBPROCESS_VARIABLES = ("COVERAGE_PROCESS_CONFIG", "COVERAGE_PROCESS_START")


def pytest_configure(config):
    """(pytest plugin, in every process) The Triton interpreter's own work runs untraced."""
    _untrace_interpreter()


def _untrace_interpreter() -> None:
    """Python 3.11 runs every frame slower while a trace function is set, measured or not: the quick suite took
    twice its time under coverage, most of it in the Triton interpreter's own Python (the semantic layer behind
    each tl.* call, its patching of the language for each launch, the copies of the arguments), where no measured
    line is. Those functions stop the tracer for their call and start it again after; a kernel's body, its jit
    helpers and the combine functions given to tl.reduce stay traced."""
    try:
        from triton.runtime import interpreter
        scope, grid = interpreter._LangPatchScope, interpreter.GridExecutor
        wrapped = [(interpreter, "_patch_lang"), (scope, "restore"), (grid, "_init_args_hst"),
                   (grid, "_restore_args_dev")]
        members = [getattr(owner, name) for owner, name in wrapped] + [scope.set_attr]
    except AttributeError:  # another triton: traced as it is, only slower
        return
    for (owner, name), member in zip(wrapped, members):
        setattr(owner, name, _untraced(member))
    set_attr = members[-1]

    def set_untraced_attr(patch_scope, obj, name, value):
        # what a kernel calls in place of a tl.* builtin, a tensor method or a language hook while it runs
        set_attr(patch_scope, obj, name, _untraced(value) if inspect.isfunction(value) else value)

    scope.set_attr = set_untraced_attr


def _untraced(function):
    """function, called with the tracer stopped, unless it is given a function (tl.reduce's combine_fn). The
    wrapper's own call and return are traced: coverage.py's stack of frames stays in step."""
    def untraced_call(*args, **kwargs):
        tracer = sys.gettrace()
        if tracer is None or not hasattr(tracer, "stop") or any(map(callable, args)) \
                or any(map(callable, kwargs.values())):
            return function(*args, **kwargs)
        tracer.stop()
        try:
            return function(*args, **kwargs)
        finally:
            tracer.start()

    return untraced_call


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """(pytest plugin, in every xdist worker) Measuring paused while a test outside conformance/ runs."""
    measuring = coverage.Coverage.current()
    # Paused by the collector's pause/resume: Coverage.stop/start would redo start's checks of every module
    # imported, which torch.ops's namespaces break.
    collector = getattr(measuring, "_collector", None)
    if collector is None or Path(str(item.path)).parent.name == "conformance":
        yield
        return
    collector.pause()
    hidden = {name: os.environ.pop(name) for name in _SUBPROCESS_VARIABLES if name in os.environ}
    try:
        yield
    finally:
        os.environ.update(hidden)
        collector.resume()


def summarize(files: dict, prefix: str) -> dict:
    """Lines and branches (covered, total, percent) over the files under ``prefix``."""
    keys = {"lines": ("covered_lines", "num_statements"), "branches": ("covered_branches", "num_branches")}
    totals = {}
    for what, (covered_key, total_key) in keys.items():
        covered = sum(f["summary"][covered_key] for name, f in files.items() if name.startswith(prefix))
        total = sum(f["summary"][total_key] for name, f in files.items() if name.startswith(prefix))
        totals[what] = (covered, total, 100.0 * covered / total if total else 100.0)
    return totals


def _relative(files: dict) -> dict:
    return {str(Path(name).resolve().relative_to(ROOT)) if Path(name).is_absolute() else name: f
            for name, f in files.items()}


def markdown(report: dict) -> str:
    files = _relative(report["files"])
    lines = [f"# What the quick conformance suite reaches (vendor {vendor()})", ""]
    lines += ["| measured | lines | branches |", "|---|---|---|"]
    for prefix in MEASURED:
        totals = summarize(files, prefix)
        lines.append(f"| {prefix} | " + " | ".join(f"{p:.1f}% ({c}/{t})" for c, t, p in totals.values()) + " |")
    ops = summarize(files, "gems/ops")
    verdict = [f"{what} {ops[what][2]:.1f}% (target {target:g}%)" for what, target in TARGET.items()]
    lines += ["", "gems/ops: " + ", ".join(verdict), "", "## Declared unreachable on the interpreter", ""]
    for name in sorted(files):
        for number, text in enumerate((ROOT / name).read_text().splitlines(), 1):
            if UNREACHED in text:
                code, _, why = text.partition(UNREACHED)
                lines.append(f"- {name}:{number} `{code.strip()}`: {why.strip()}")
    lines += ["", "## Not reached, per file", ""]
    for name in sorted(files):
        f = files[name]
        missed_branches = f.get("missing_branches", [])
        if not f["missing_lines"] and not missed_branches:
            continue
        source = (ROOT / name).read_text().splitlines()
        s = f["summary"]
        lines.append(f"### {name}: {s['covered_lines']}/{s['num_statements']} lines, "
                     f"{s['covered_branches']}/{s['num_branches']} branches")
        lines.append("")
        if f["missing_lines"]:
            lines.append("missed lines: " + _ranges(f["missing_lines"]))
        for start, end in missed_branches:
            target = "exit" if end < 0 else str(end)
            lines.append(f"- branch {start} -> {target}: `{source[start - 1].strip()}`")
        lines.append("")
    return "\n".join(lines)


def _ranges(numbers: list[int]) -> str:
    spans, first = [], None
    for i, n in enumerate(numbers):
        first = n if first is None else first
        if i + 1 == len(numbers) or numbers[i + 1] != n + 1:
            spans.append(str(first) if first == n else f"{first}-{n}")
            first = None
    return ", ".join(spans)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gems.testing.coverage", description=__doc__.split("\n\n")[0],
                                     allow_abbrev=False)  # the rest is pytest's: --report-dir is not --report-only
    parser.add_argument("--out", type=Path, default=ROOT / "runs" / "coverage", help="where the report goes")
    parser.add_argument("--report-only", action="store_true", help="write the report from the data in --out")
    parser.add_argument("--append", action="store_true",
                        help="keep the data of earlier runs in --out: the report covers them all")
    args, pytest_args = parser.parse_known_args(argv)
    args.out = args.out.resolve()  # pytest runs from the repository root
    status = 0 if args.report_only else run(args.out, pytest_args, args.append)
    report = json_report(args.out)
    (args.out / "coverage.md").write_text(markdown(report) + "\n")
    files = _relative(report["files"])
    targets = ", ".join(f"{what} {t:g}%" for what, t in TARGET.items())
    for prefix in MEASURED:
        totals = ", ".join(f"{what} {p:.1f}% ({c}/{t})" for what, (c, t, p) in summarize(files, prefix).items())
        print(f"coverage of {prefix}: {totals}" + (f" (target: {targets})" if prefix == "gems/ops" else ""))
    print(f"what no sample reaches, per file: {args.out / 'coverage.md'}")
    return status


if __name__ == "__main__":
    sys.exit(main())
