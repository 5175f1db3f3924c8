"""Samples of the shape operators that move elements within a tensor: flip, roll, pixel_shuffle,
pixel_unshuffle."""

from __future__ import annotations

import torch

from gems.spec import Sample
from gems.testing.samples import shape_for, strided, transposed
from gems.testing.samples_shape_common import fresh, maker, specials_2d, with_extra


def flip_samples(dtype, device, quick):
    rows, cols = shape_for(quick)
    make = maker(dtype, device)
    core = [
        Sample("dim0", lambda: (make((rows, cols)), (0,))),
        Sample("all-dims", lambda: (make((3, 5, 7)), (0, 1, 2))),
        Sample("noncontiguous", lambda: (transposed((rows, cols), dtype, device), (-1,))),
        Sample("special-values", lambda: (specials_2d(dtype, device), (1,))),
        # Whole 16-byte groups of columns: the copy kernel loads them forward and reverses them in registers.
        Sample("last-dim-groups", lambda: (make((5, 64)), (-1,))),
        Sample("out", lambda: (make((rows, cols)), (1,)), expects="flip.out",
               call=lambda x, dims: torch.ops.aten.flip.out(x, dims, out=fresh(x))),
    ]
    if dtype.is_floating_point:
        core.append(Sample("grad", lambda: (make((rows, cols), grad=True), (0, 1)), grad=True))

    def extra():
        return [
            Sample("last-dim", lambda: (make((rows, cols)), (-1,))),
            Sample("middle-dim", lambda: (make((3, 5, 7)), (1,))),
            Sample("strided", lambda: (strided((rows, cols), dtype, device), (0, 1))),
            Sample("permuted", lambda: (make((3, 5, 7)).permute(2, 0, 1), (0, 2))),
            Sample("no-dims", lambda: (make((rows, cols)), ())),
            Sample("0d", lambda: (make(()), (0,))),
            Sample("empty", lambda: (make((0, cols)), (1,))),
            Sample("size-one-dim", lambda: (make((1, cols)), (0, 1))),
            Sample("6d", lambda: (make((2, 1, 3, 2, 3, 2)).transpose(0, 4), (0, 2, 5))),
            Sample("channels-last", lambda: (make((2, 3, 4, 5)).to(memory_format=torch.channels_last), (1, 3))),
            Sample("out-noncontiguous", lambda: (make((rows, cols)), (0,)), expects="flip.out",
                   call=lambda x, dims: torch.ops.aten.flip.out(
                       x, dims, out=torch.empty(x.shape[::-1], dtype=x.dtype, device=x.device).t())),
            Sample("error-duplicate-dims", lambda: (make((rows, cols)), (0, -2))),
            Sample("error-dim", lambda: (make((rows, cols)), (2,))),
            Sample("error-out-dtype", lambda: (make((rows, cols)), (0,)), expects="flip.out",
                   call=lambda x, dims: torch.ops.aten.flip.out(x, dims, out=fresh(x, torch.int32))),
        ]

    return with_extra(dtype, core, extra)


def roll_samples(dtype, device, quick):
    rows, cols = shape_for(quick)
    make = maker(dtype, device)
    core = [
        Sample("dim0", lambda: (make((rows, cols)), (3,), (0,))),
        Sample("two-dims", lambda: (make((rows, cols)), (-2, 20), (0, 1))),
        Sample("flattened", lambda: (make((rows, cols)), (5,))),
        Sample("noncontiguous", lambda: (transposed((rows, cols), dtype, device), (4,), (1,))),
        Sample("special-values", lambda: (specials_2d(dtype, device), (3,), (1,))),
        Sample("out", lambda: (make((rows, cols)), (2,), (1,)), expects="roll.out",
               call=lambda x, s, d: torch.ops.aten.roll.out(x, s, d, out=fresh(x))),
    ]
    if dtype.is_floating_point:
        core.append(Sample("grad", lambda: (make((rows, cols), grad=True), (1, 2), (0, 1)), grad=True))

    def extra():
        return [
            Sample("negative-shift", lambda: (make((rows, cols)), (-3,), (-1,))),
            Sample("shift-beyond-size", lambda: (make((rows, cols)), (3 * cols + 2,), (1,))),
            Sample("same-dim-twice", lambda: (make((rows, cols)), (2, 3), (1, 1))),
            Sample("flattened-noncontiguous", lambda: (transposed((rows, cols), dtype, device), (-7,))),
            Sample("3d", lambda: (make((3, 5, 7)), (1, -2), (2, 0))),
            Sample("0d", lambda: (make(()), (2,))),
            Sample("empty", lambda: (make((0, cols)), (2,), (1,))),
            Sample("zero-shift", lambda: (make((rows, cols)), (0,), (0,))),
            Sample("out-flattened", lambda: (make((rows, cols)), (5,)), expects="roll.out",
                   call=lambda x, s: torch.ops.aten.roll.out(x, s, out=fresh(x))),
            Sample("error-no-shifts", lambda: (make((rows, cols)), (), ())),
            Sample("error-align", lambda: (make((rows, cols)), (1, 2), (0,))),
            Sample("error-align-flattened", lambda: (make((rows, cols)), (1, 2))),
            Sample("error-dim", lambda: (make((rows, cols)), (1,), (2,))),
            Sample("error-0d-dim", lambda: (make(()), (1,), (0,))),
        ]

    return with_extra(dtype, core, extra)


def _shuffle_samples(fn, dtype, device, quick, small, big, wide, empty=True):
    """pixel_shuffle / pixel_unshuffle: ``small``, ``big`` and ``wide`` are inputs (shape, factor) the op accepts;
    wide's planes are wider than one program's columns (pixel_planes.py)."""
    make = maker(dtype, device)
    overload = f"{fn.__name__}.out"
    op = getattr(torch.ops.aten, fn.__name__)
    core = [
        Sample("batched", lambda: (make(small[0]), small[1])),
        Sample("factor-3", lambda: (make(big[0]), big[1])),
        Sample("wide", lambda: (make(wide[0]), wide[1])),
        Sample("noncontiguous", lambda: (make(small[0][::-1]).permute(3, 2, 1, 0), small[1])),
        Sample("out", lambda: (make(small[0]), small[1]), expects=overload,
               call=lambda x, r: op.out(x, r, out=fresh(x))),
    ]
    if dtype.is_floating_point:
        core.append(Sample("grad", lambda: (make(small[0], grad=True), small[1]), grad=True))

    def extra():
        return [
            Sample("unbatched", lambda: (make(small[0][1:]), small[1])),
            Sample("two-batch-dims", lambda: (make((2, *small[0])), small[1])),
            Sample("strided-batch", lambda: (make((3, *small[0]))[::2].transpose(0, 1), small[1])),
            Sample("channels-last", lambda: (make(small[0]).to(memory_format=torch.channels_last), small[1])),
            Sample("factor-1", lambda: (make(small[0]), 1)),
            Sample("error-2d", lambda: (make(small[0][2:]), small[1])),
            Sample("error-factor", lambda: (make(small[0]), 0)),
            Sample("error-not-divisible", lambda: (make(small[0]), small[1] + 1)),
        ] + ([Sample("empty", lambda: (make((0, *small[0][1:])), small[1]))] if empty else [])

    return with_extra(dtype, core, extra)


def pixel_shuffle_samples(dtype, device, quick):
    return _shuffle_samples(torch.pixel_shuffle, dtype, device, quick, ((2, 12, 3, 5), 2), ((1, 18, 4, 3), 3),
                            ((1, 4, 2, 2100), 2))


def pixel_unshuffle_samples(dtype, device, quick):
    # No empty input: ATen's CPU kernel returns an empty input unchanged (a clone), its CUDA (composite) kernel
    # returns the unshuffled shape, which gems follows; the CPU stands in for the oracle here.
    return _shuffle_samples(torch.pixel_unshuffle, dtype, device, quick, ((2, 3, 6, 10), 2), ((1, 2, 9, 6), 3),
                            ((1, 1, 4, 4200), 2), empty=False)
