"""gems.testing.coverage's own rules: lines marked unreached leave the totals, and a kernel run by Triton's
interpreter is seen to exit (its arcs name the def line; coverage.py's analysis, the first decorator's), and the
interpreter's own functions, run untraced, change nothing that is recorded."""

import os
import subprocess
import sys

import coverage

from gems.testing import coverage as report

MODULE = '''\
import functools


@functools.cache
def kernel(x):
    if x:  # unreached on the interpreter: a device-only path
        x = 2
    return x


kernel(0)
'''


def test_a_line_marked_unreached_leaves_the_totals_with_its_block(tmp_path):
    (tmp_path / "module.py").write_text(MODULE)
    rc = report._config(tmp_path)
    measured = coverage.Coverage(config_file=str(rc), data_file=str(tmp_path / ".cov"), include=[str(tmp_path / "*")])
    analysis = measured.analysis2(str(tmp_path / "module.py"))
    statements, excluded = analysis[1], analysis[2]
    assert [6, 7] == sorted(excluded) and 6 not in statements and 7 not in statements


def test_a_kernels_exit_arcs_are_counted_under_its_first_decorator(tmp_path):
    source = tmp_path / "module.py"
    source.write_text(MODULE)
    data = coverage.CoverageData(basename=str(tmp_path / ".coverage"))
    # As the interpreter records a kernel compiled from its def line (5): entry and exit name -5.
    data.add_arcs({str(source): [(-5, 6), (6, 8), (8, -5)]})
    data.write()
    report._add_kernel_arcs(tmp_path)
    data = coverage.CoverageData(basename=str(tmp_path / ".coverage"))
    data.read()
    assert {(-4, 6), (8, -4)} <= set(data.arcs(str(source)))


KERNEL_MODULE = '''\
import torch
import triton
import triton.language as tl


@triton.jit
def _larger(a, b):
    return tl.where(a > b, a, b)


@triton.jit
def kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, SCALE: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offsets, mask=offsets < n, other=0.0)
    if SCALE:
        x = x * 2.0
    largest = tl.reduce(x, 0, _larger)
    tl.store(out_ptr, largest + tl.sum(x, 0))


def run(scale):
    out = torch.empty(1)
    kernel[(1,)](torch.arange(4.0), out, 4, BLOCK=8, SCALE=scale)
    return out.item()
'''

RUN_KERNEL = '''\
import os
import sys

os.environ["TRITON_INTERPRET"] = "1"
sys.path.insert(0, os.path.dirname(__file__))
if os.environ["UNTRACE"] == "1":
    from gems.testing import coverage
    coverage._untrace_interpreter()
import kernel_module

print(kernel_module.run(True), kernel_module.run(False))
'''


def test_the_interpreters_untraced_calls_leave_a_kernels_lines_and_arcs_as_traced(tmp_path):
    """The interpreter's own functions run with the tracer stopped (for speed): what coverage.py records of a
    kernel, its jit helper given to tl.reduce and the branch on a constexpr must not change."""
    (tmp_path / "kernel_module.py").write_text(KERNEL_MODULE)
    (tmp_path / "run_kernel.py").write_text(RUN_KERNEL)
    arcs = {}
    for untrace in ("0", "1"):
        data_file = tmp_path / f".coverage-{untrace}"
        done = subprocess.run(
            [sys.executable, "-m", "coverage", "run", "--branch", f"--data-file={data_file}",
             f"--include={tmp_path / 'kernel_module.py'}", str(tmp_path / "run_kernel.py")],
            env={**os.environ, "UNTRACE": untrace}, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        assert done.stdout.split() == ["18.0", "9.0"], done.stdout  # max 6 + sum 12; max 3 + sum 6
        data = coverage.CoverageData(basename=str(data_file))
        data.read()
        arcs[untrace] = set(data.arcs(str(tmp_path / "kernel_module.py")))
    assert arcs["1"] == arcs["0"]
    lines = {b for a, b in arcs["1"] if b > 0}
    assert {8, 13, 14, 15, 16, 17, 18} <= lines  # the combine function and every line of the kernel


def test_data_appended_from_a_copy_of_the_checkout_counts_as_its_own_files(tmp_path):
    # CI's worked example runs its conformance in a scratch copy of the repository (--append): the report must
    # count those files as this checkout's, beside the data of runs made here.
    mine = report.ROOT / "gems" / "ops" / "blas" / "mm.py"
    copied = tmp_path / "scratch" / "gems-copy" / "gems" / "ops" / "blas" / "mm.py"
    report._parts(tmp_path).mkdir()
    for suffix, path, arcs in (("copy", copied, [(-1, 1), (1, -1)]), ("here", mine, [(-1, 2), (2, -1)])):
        data = coverage.CoverageData(basename=str(report._parts(tmp_path) / ".coverage"), suffix=suffix)
        data.add_arcs({str(path): arcs})
        data.write()
    report.combine(tmp_path)
    report.json_report(tmp_path)  # coverage.py's report erases the process files beside the data file it reads
    report.combine(tmp_path)  # again, as a later --append run does: the same data, nothing counted twice
    combined = coverage.CoverageData(basename=str(tmp_path / ".coverage"))
    combined.read()
    assert combined.measured_files() == {str(mine)}
    assert set(combined.arcs(str(mine))) == {(-1, 1), (1, -1), (-1, 2), (2, -1)}
