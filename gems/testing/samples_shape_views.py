"""Samples of the operators that write into a view of a new tensor: the gradients of slice, select and
unfold (slice_backward, select_backward, unfold_backward) and slice_scatter, select_scatter, diagonal_scatter."""

from __future__ import annotations

import torch

from gems.spec import Sample
from gems.testing.samples import shape_for, transposed
from gems.testing.samples_shape_common import fresh, maker, with_extra


def slice_backward_samples(dtype, device, quick):
    rows, cols = shape_for(quick)
    make = maker(dtype, device)
    core = [
        Sample("step-1", lambda: (make((rows, 10)), (rows, cols), 1, 3, 13, 1)),
        Sample("step-3", lambda: (make((rows, 5)), (rows, cols), 1, 2, 17, 3)),
        Sample("noncontiguous", lambda: (transposed((5, cols), dtype, device), (rows, cols), 0, 1, 11, 2)),
        Sample("out", lambda: (make((rows, 5)), (rows, cols), 1, 2, 17, 3), expects="slice_backward.out",
               call=lambda g, *a: torch.ops.aten.slice_backward.out(g, *a, out=fresh(g))),
    ]

    def extra():
        return [
            Sample("negative-bounds", lambda: (make((rows, 4)), (rows, cols), -1, -12, -3, 2)),
            Sample("end-beyond", lambda: (make((2, cols)), (rows, cols), 0, 11, 2**62, 1)),
            Sample("3d-middle", lambda: (make((3, 2, 7)), (3, 5, 7), 1, 1, 5, 2)),
            Sample("broadcast-grad", lambda: (make((rows, 1)), (rows, cols), 1, 2, 17, 3)),
            Sample("empty-slice", lambda: (make((rows, 0)), (rows, cols), 1, 9, 3, 1)),
            Sample("empty", lambda: (make((0, 5)), (0, cols), 1, 2, 17, 3)),
            Sample("1d", lambda: (make((4,)), (cols,), 0, 1, 16, 4)),
            Sample("error-step", lambda: (make((rows, 5)), (rows, cols), 1, 2, 17, 0)),
            Sample("error-dim", lambda: (make((rows, 5)), (rows, cols), 2, 2, 17, 3)),
            Sample("error-shape", lambda: (make((rows, 4)), (rows, cols), 1, 2, 17, 3)),
        ]

    return with_extra(dtype, core, extra)


def select_backward_samples(dtype, device, quick):
    rows, cols = shape_for(quick)
    make = maker(dtype, device)
    core = [
        Sample("dim0", lambda: (make((cols,)), (rows, cols), 0, 3)),
        Sample("last-dim", lambda: (make((3, 5)), (3, 5, 7), -1, -2)),
        Sample("noncontiguous", lambda: (transposed((3, 7), dtype, device), (3, 5, 7), 1, 4)),
        Sample("out", lambda: (make((cols,)), (rows, cols), 0, 3), expects="select_backward.out",
               call=lambda g, *a: torch.ops.aten.select_backward.out(g, *a, out=fresh(g))),
    ]

    def extra():
        return [
            Sample("1d", lambda: (make(()), (cols,), 0, 5)),
            Sample("broadcast-grad", lambda: (make((1,)), (rows, cols), 0, 1)),
            Sample("empty", lambda: (make((0,)), (rows, 0), 0, 2)),
            Sample("error-index", lambda: (make((cols,)), (rows, cols), 0, rows)),
            Sample("error-negative-index", lambda: (make((cols,)), (rows, cols), 0, -rows - 1)),
            Sample("error-dim", lambda: (make((cols,)), (rows, cols), 2, 0)),
            Sample("error-shape", lambda: (make((cols + 1,)), (rows, cols), 0, 0)),
        ]

    return with_extra(dtype, core, extra)


def _scatter_samples(dtype, device, quick, overload, cases, extra_cases):
    """Samples of a *_scatter operator: cases and extra_cases are (variant, self shape, src shape, args)."""
    make = maker(dtype, device)
    fn = getattr(torch.ops.aten, overload)

    def sample(variant, shape, src, args, layout=None, src_dtype=None, grad=False):
        def build():
            x = make(shape, grad=grad) if layout is None else layout(make(shape[::-1])).requires_grad_(grad)
            return (x, make(src, src_dtype or dtype, grad=grad), *args)

        return Sample(variant, build, grad=grad)

    core = [sample(*c) for c in cases]
    core.append(Sample("out", core[0].args, expects=f"{overload}.out",
                       call=lambda x, src, *a: fn.out(x, src, *a, out=fresh(x))))
    if dtype.is_floating_point:
        variant, shape, src, args = cases[0]
        core.append(sample("grad", shape, src, args, grad=True))

    def extra():
        return [sample(*c) for c in extra_cases]

    return with_extra(dtype, core, extra)


def slice_scatter_samples(dtype, device, quick):
    rows, cols = shape_for(quick)
    t = lambda x: x.t()  # noqa: E731
    return _scatter_samples(dtype, device, quick, "slice_scatter", [
        ("step-2", (rows, cols), (rows, 6), (1, 3, 15, 2)),
        ("dim0", (rows, cols), (4, cols), (0, 2, 6)),
        ("noncontiguous", (rows, cols), (rows, 5), (1, -5, None), t),
    ], [
        ("defaults", (rows, cols), (rows, cols), ()),
        ("3d", (3, 5, 7), (3, 5, 2), (2, 1, 7, 3)),
        ("src-other-dtype", (rows, cols), (rows, 6), (1, 3, 15, 2), None, torch.float64),
        ("empty-slice", (rows, cols), (rows, 0), (1, 9, 3)),
        ("error-src-size", (rows, cols), (rows, 5), (1, 3, 15, 2)),
        ("error-step", (rows, cols), (rows, 6), (1, 3, 15, 0)),
        ("error-dim", (rows, cols), (rows, 6), (2, 3, 15, 2)),
    ])


def select_scatter_samples(dtype, device, quick):
    rows, cols = shape_for(quick)
    t = lambda x: x.t()  # noqa: E731
    return _scatter_samples(dtype, device, quick, "select_scatter", [
        ("dim0", (rows, cols), (cols,), (0, 3)),
        ("last-dim", (3, 5, 7), (3, 5), (-1, -2)),
        ("noncontiguous", (rows, cols), (rows,), (1, 4), t),
    ], [
        ("src-other-dtype", (rows, cols), (cols,), (0, 3), None, torch.int64),
        ("1d", (cols,), (), (0, 5)),
        ("error-src-size", (rows, cols), (cols + 1,), (0, 3)),
        ("error-index", (rows, cols), (cols,), (0, rows)),
    ])


def diagonal_scatter_samples(dtype, device, quick):
    rows, cols = shape_for(quick)
    t = lambda x: x.t()  # noqa: E731
    return _scatter_samples(dtype, device, quick, "diagonal_scatter", [
        ("main", (rows, cols), (rows,), ()),
        ("offset", (rows, cols), (rows - 2,), (6,)),
        ("noncontiguous", (rows, cols), (rows - 2,), (-2,), t),
    ], [
        ("negative-offset", (rows, cols), (rows - 4,), (-4,)),
        ("3d-dims", (3, 5, 7), (3, 5), (1, 2, 0)),
        ("offset-beyond", (rows, cols), (0,), (cols,)),
        ("src-other-dtype", (rows, cols), (rows,), (), None, torch.bool),
        ("error-src-size", (rows, cols), (rows + 1,), ()),
        ("error-same-dims", (rows, cols), (rows,), (0, 1, 1)),
    ])


def unfold_backward_samples(dtype, device, quick):
    rows, cols = shape_for(quick)
    make = maker(dtype, device)
    windows = lambda n, size, step: (n - size) // step + 1  # noqa: E731
    core = [
        Sample("overlapping", lambda: (make((rows, windows(cols, 5, 2), 5)), (rows, cols), 1, 5, 2)),
        Sample("disjoint", lambda: (make((windows(rows, 3, 4), cols, 3)), (rows, cols), 0, 3, 4)),
        Sample("noncontiguous", lambda: (make((5, windows(cols, 5, 2), rows)).transpose(0, 2), (rows, cols), 1, 5, 2)),
        Sample("out", lambda: (make((rows, windows(cols, 5, 2), 5)), (rows, cols), 1, 5, 2),
               expects="unfold_backward.out",
               call=lambda g, *a: torch.ops.aten.unfold_backward.out(g, *a, out=fresh(g))),
    ]

    def extra():
        return [
            Sample("step-1", lambda: (make((rows, windows(cols, 4, 1), 4)), (rows, cols), -1, 4, 1)),
            Sample("3d-middle", lambda: (make((3, windows(6, 3, 1), 7, 3)), (3, 6, 7), 1, 3, 1)),
            Sample("1d", lambda: (make((windows(cols, 6, 5), 6)), (cols,), 0, 6, 5)),
            Sample("0d", lambda: (make((1,)), (), 0, 1, 1)),
            Sample("tail-uncovered", lambda: (make((rows, windows(cols, 4, 3), 4)), (rows, cols), 1, 4, 3)),
            Sample("empty", lambda: (make((0, windows(cols, 5, 2), 5)), (0, cols), 1, 5, 2)),
            Sample("error-step", lambda: (make((rows, 4, 5)), (rows, cols), 1, 5, 0)),
            Sample("error-dim", lambda: (make((rows, 4, 5)), (rows, cols), 2, 5, 2)),
        ]

    return with_extra(dtype, core, extra)
