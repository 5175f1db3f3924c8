"""gems.testing.coverage's own rules: lines marked unreached leave the totals, and a kernel run by Triton's
interpreter is seen to exit (its arcs name the def line; coverage.py's analysis, the first decorator's)."""

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
