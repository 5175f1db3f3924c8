"""Samples of the shape operators that join tensors: cat, stack, hstack, vstack."""

from __future__ import annotations

import torch

from gems.spec import Sample
from gems.testing.samples import _with_out, shape_for, strided, transposed
from gems.testing.samples_extra import other_device
from gems.testing.samples_shape_common import maker, specials_2d, with_extra


def cat_samples(dtype, device, quick):
    rows, cols = shape_for(quick)
    make = maker(dtype, device)

    def joined(*shapes, dim=0, grad=False):
        return lambda: ([make(s, grad=grad) for s in shapes], dim)

    core = [
        Sample("dim0", joined((rows, cols), (5, cols))),
        Sample("last-dim", joined((rows, cols), (rows, 4), (rows, 9), dim=-1)),
        Sample("noncontiguous", lambda: ([transposed((rows, cols), dtype, device), strided((rows, cols), dtype, device),
                                          make((rows, 3))], 1)),
        Sample("special-values", lambda: ([specials_2d(dtype, device), make((2, 3))], 1)),
        Sample("out", joined((rows, cols), (rows, 4), dim=1), expects="cat.out", call=_with_out),
    ]
    if dtype.is_floating_point:
        core.append(Sample("grad", joined((rows, cols), (rows, 4), dim=1, grad=True), grad=True))

    def extra():
        def out_call(make_out):
            return lambda ts, dim: torch.cat(ts, dim, out=make_out(ts[0].device))

        return [
            Sample("3d-middle", joined((3, 5, 7), (3, 2, 7), (3, 1, 7), dim=1)),
            Sample("kv-cache", joined((1, 2, 9, 16), (1, 2, 1, 16), dim=2)),
            Sample("transposed-dim0", lambda: ([transposed((rows, cols), dtype, device), make((2, cols))], 0)),
            Sample("column-slices", lambda: (lambda x: ([x[:, cols:], x[:, :cols]], -1))(make((rows, 2 * cols)))),
            Sample("expanded", joined((1, cols), (2, cols)),
                   call=lambda ts, dim: torch.cat([ts[0].expand(rows, cols), ts[1]], dim)),
            Sample("many-inputs", lambda: ([make((2, k + 1)) for k in range(11)], 1)),
            Sample("empty-input", joined((rows, cols), (0, cols), (2, cols))),
            Sample("legacy-empty", lambda: ([make((0,)), make((rows, cols)), make((0,), torch.float64)], 1)),
            Sample("all-legacy-empty", joined((0,), (0,), dim=3)),
            Sample("all-empty", joined((0, cols), (0, cols))),
            Sample("single", joined((rows, cols))),
            Sample("1d", joined((rows,), (cols,))),
            Sample("type-promotion", lambda: ([make((rows, cols)), make((2, cols), torch.int32),
                                               make((3, cols), torch.bool)], 0)),
            Sample("type-promotion-ints", lambda: ([make((2, cols), torch.int8), make((3, cols), torch.uint8)], 0)),
            Sample("type-promotion-halves", lambda: ([make((2, cols), torch.float16),
                                                      make((3, cols), torch.bfloat16)], 0)),
            Sample("channels-last", lambda: ([make((2, 3, 4, 5)).to(memory_format=torch.channels_last),
                                              make((2, 2, 4, 5)).to(memory_format=torch.channels_last)], 1)),
            Sample("channels-last-mixed", lambda: ([make((2, 3, 4, 5)).to(memory_format=torch.channels_last),
                                                    make((2, 2, 4, 5))], 1)),
            Sample("channels-last-3d", lambda: ([make((2, 3, 2, 4, 5)).to(memory_format=torch.channels_last_3d),
                                                 make((2, 3, 1, 4, 5)).to(memory_format=torch.channels_last_3d)],
                                                2)),
            Sample("out-wider-dtype", joined((rows, cols), (2, cols)), expects="cat.out",
                   call=out_call(lambda dev: torch.empty(0, dtype=torch.float64, device=dev))),
            Sample("out-transposed", joined((rows, cols), (2, cols)), expects="cat.out",
                   call=out_call(lambda dev: torch.empty(cols, rows + 2, dtype=dtype, device=dev).t())),
            Sample("out-resized", joined((rows, cols), (2, cols)), expects="cat.out",
                   call=out_call(lambda dev: torch.empty(3, 3, dtype=dtype, device=dev))),
            Sample("grad-3d", joined((3, 5, 7), (3, 2, 7), dim=-2, grad=True), grad=True),
            Sample("error-zero-dim", lambda: ([make((rows,)), make(())], 0)),
            Sample("error-dim", joined((rows, cols), (2, cols), dim=2)),
            Sample("error-negative-dim", joined((rows, cols), (2, cols), dim=-3)),
            Sample("error-ndim", joined((rows, cols), (2, cols, 1))),
            Sample("error-sizes", joined((rows, cols), (2, cols + 1))),
            Sample("error-empty-sizes", joined((rows, cols), (0, cols + 1))),
            Sample("error-empty-list", lambda: ([], 0)),
            Sample("error-other-device", joined((rows, cols), (2, cols)),
                   call=lambda ts, dim: torch.cat([ts[0], ts[1].to(other_device(ts[1].device))], dim)),
            Sample("error-out-dtype", joined((rows, cols), (2, cols)), expects="cat.out",
                   call=out_call(lambda dev: torch.empty(0, dtype=torch.int32, device=dev))),
            Sample("error-out-overlap", joined((rows, cols), (2, cols)), expects="cat.out",
                   call=lambda ts, dim: torch.cat(ts, dim, out=ts[1])),
            Sample("error-out-expanded", joined((rows, cols), (2, cols)), expects="cat.out",
                   call=out_call(lambda dev: torch.empty(1, cols, dtype=dtype, device=dev).expand(rows + 2, cols))),
        ]

    return with_extra(dtype, core, extra)


def stack_samples(dtype, device, quick):
    rows, cols = shape_for(quick)
    make = maker(dtype, device)

    def stacked(*shapes, dim=0, grad=False):
        return lambda: ([make(s, grad=grad) for s in shapes], dim)

    core = [
        Sample("dim0", stacked((rows, cols), (rows, cols)), expects="cat"),
        Sample("last-dim", stacked((rows, cols), (rows, cols), (rows, cols), dim=-1), expects="cat"),
        Sample("noncontiguous", lambda: ([transposed((rows, cols), dtype, device),
                                          strided((rows, cols), dtype, device)], 1), expects="cat"),
        Sample("out", stacked((rows, cols), (rows, cols), dim=1), expects="cat.out", call=_with_out),
    ]
    if dtype.is_floating_point:
        core.append(Sample("grad", stacked((rows, cols), (rows, cols), dim=1, grad=True), expects="cat", grad=True))

    def extra():
        return [
            Sample("1d", stacked((cols,), (cols,), (cols,)), expects="cat"),
            Sample("0d", stacked((), ()), expects="cat"),
            Sample("type-promotion", lambda: ([make((rows, cols)), make((rows, cols), torch.int64)], 0), expects="cat"),
            Sample("single", stacked((rows, cols), dim=2), expects="cat"),
            Sample("empty", stacked((0, cols), (0, cols), dim=1), expects="cat"),
            Sample("error-sizes", stacked((rows, cols), (rows, cols + 1))),
            Sample("error-dim", stacked((rows, cols), (rows, cols), dim=3)),
            Sample("error-empty-list", lambda: ([], 0)),
        ]

    return with_extra(dtype, core, extra)


def _atleast_stack_samples(dtype, device, quick):
    """hstack / vstack: the calls take only the list (and out=)."""
    rows, cols = shape_for(quick)
    make = maker(dtype, device)

    def listed(*shapes, grad=False):
        return lambda: ([make(s, grad=grad) for s in shapes],)

    core = [
        Sample("2d", listed((rows, cols), (rows, cols)), expects="cat"),
        Sample("1d", listed((cols,), (cols,)), expects="cat"),
        Sample("out", listed((rows, cols), (rows, cols)), expects="cat.out", call=_with_out),
    ]
    if dtype.is_floating_point:
        core.append(Sample("grad", listed((rows, cols), (rows, cols), grad=True), expects="cat", grad=True))

    def extra():
        return [
            Sample("0d", listed((), ()), expects="cat"),
            Sample("3d", listed((2, 3, 4), (2, 3, 4)), expects="cat"),
            Sample("noncontiguous", lambda: ([transposed((rows, cols), dtype, device), make((rows, cols))],),
                   expects="cat"),
            Sample("error-empty-list", lambda: ([],)),
        ]

    return with_extra(dtype, core, extra)


hstack_samples = vstack_samples = _atleast_stack_samples
