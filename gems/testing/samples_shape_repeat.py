"""Samples of the shape operators that repeat elements: repeat, tile, repeat_interleave."""

from __future__ import annotations

import torch

from gems.spec import Sample
from gems.testing.samples import make_tensor, shape_for, strided, transposed
from gems.testing.samples_shape_common import fresh, maker, specials_2d, with_extra


def repeat_samples(dtype, device, quick):
    rows, cols = shape_for(quick)
    make = maker(dtype, device)
    core = [
        Sample("both-dims", lambda: (make((rows, cols)), (2, 3))),
        Sample("new-dims", lambda: (make((rows, cols)), (2, 1, 2))),
        Sample("noncontiguous", lambda: (transposed((rows, cols), dtype, device), (1, 2))),
        Sample("special-values", lambda: (specials_2d(dtype, device), (2, 2))),
        # Rows of 512 bytes or more in every dtype: wide tiles of the walk.
        Sample("long-rows", lambda: (make((3, 521)), (2, 3))),
        Sample("out", lambda: (make((rows, cols)), (2, 1)), expects="repeat.out",
               call=lambda x, r: torch.ops.aten.repeat.out(x, r, out=fresh(x))),
    ]
    if dtype.is_floating_point:
        core.append(Sample("grad", lambda: (make((rows, cols), grad=True), (2, 3)), grad=True))

    def extra():
        return [
            Sample("ones", lambda: (make((rows, cols)), (1, 1))),
            Sample("strided", lambda: (strided((rows, cols), dtype, device), (3, 1))),
            Sample("1d", lambda: (make((cols,)), (3,))),
            Sample("0d", lambda: (make(()), (2, 3))),
            Sample("0d-no-repeats", lambda: (make(()), ())),
            Sample("zero-repeat", lambda: (make((rows, cols)), (0, 2))),
            Sample("empty", lambda: (make((0, cols)), (2, 2))),
            Sample("many-dims", lambda: (make((2, 3)), (2, 1, 2, 3, 1))),
            Sample("4d-all-repeated", lambda: (make((2, 3, 2, 3)), (2, 2, 3, 2))),  # 8 dims split: the WRAP path
            Sample("long-rows-noncontiguous", lambda: (transposed((3, 521), dtype, device), (2, 1, 2))),
            Sample("long-rows-strided", lambda: (strided((2, 521), dtype, device), (3, 2))),
            Sample("long-rows-many-copies", lambda: (make((2, 1, 521)), (3, 2, 4, 2))),  # 48 copies
            Sample("long-rows-5-copy-dims", lambda: (make((2, 2, 2, 2, 521)), (2, 2, 2, 2, 2))),
            Sample("column-repeated", lambda: (make((521, 1)), (1, 3))),  # out's runs are the copies
            Sample("error-too-few", lambda: (make((rows, cols)), (2,))),
            Sample("error-negative", lambda: (make((rows, cols)), (2, -1))),
        ]

    return with_extra(dtype, core, extra)


def tile_samples(dtype, device, quick):
    rows, cols = shape_for(quick)
    make = maker(dtype, device)
    core = [
        Sample("both-dims", lambda: (make((rows, cols)), (2, 3)), expects="repeat"),
        Sample("fewer-dims", lambda: (make((3, 5, 7)), (2,)), expects="repeat"),
    ]
    if dtype.is_floating_point:
        core.append(Sample("grad", lambda: (make((rows, cols), grad=True), (2,)), expects="repeat", grad=True))

    def extra():
        return [
            Sample("more-dims", lambda: (make((rows, cols)), (2, 1, 2)), expects="repeat"),
            Sample("noncontiguous", lambda: (transposed((rows, cols), dtype, device), (1, 2)), expects="repeat"),
            Sample("error-negative", lambda: (make((rows, cols)), (-1,))),
        ]

    return with_extra(dtype, core, extra)


def repeat_interleave_samples(dtype, device, quick):
    """repeats tensors in int64 and int32 (the .Tensor overload), and tensors of every dtype repeated through
    the self_Tensor composite (which runs it) and the self_int one (a clone of an expanded view)."""
    rows, cols = shape_for(quick)
    make = maker(dtype, device)
    counts = lambda n, d=torch.int64: make_tensor((n,), d, device, int_low=0, int_high=3)  # noqa: E731
    core = [
        Sample("self-tensor", lambda: (make((rows, cols)), counts(cols)), kwargs={"dim": 1}),
        Sample("self-tensor-flattened", lambda: (make((3, 5)), counts(15))),
        Sample("self-int", lambda: (make((rows, cols)), 2), kwargs={"dim": 0}, expects="clone"),
    ]
    if dtype.is_floating_point:
        core.append(Sample("self-tensor-grad", lambda: (make((rows, cols), grad=True), counts(rows)),
                           kwargs={"dim": 0}, grad=True))
    if dtype in (torch.int32, torch.int64):
        core += [
            Sample("repeats", lambda: (counts(rows, dtype),)),
            Sample("repeats-output-size", lambda: (torch.tensor([2, 0, 1, 3, 1], dtype=dtype, device=device),),
                   kwargs={"output_size": 7}),
            Sample("out", lambda: (counts(rows, dtype),), expects="repeat_interleave.Tensor_out",
                   call=lambda r: torch.ops.aten.repeat_interleave.Tensor_out(r, out=fresh(r))),
        ]

    def extra():
        return [
            Sample("self-int-no-dim", lambda: (make((3, 5)), 3), expects="clone"),
            Sample("self-tensor-one-repeat", lambda: (make((rows, cols)), torch.tensor([2], device=device)),
                   kwargs={"dim": -1}),
            Sample("self-tensor-zero-repeats", lambda: (make((rows, cols)), torch.zeros(cols, dtype=torch.int64,
                                                                                        device=device)),
                   kwargs={"dim": 1}),
            Sample("repeats-long", lambda: (counts(3000),)),
            Sample("repeats-strided", lambda: (counts(2 * rows)[::2],)),
            Sample("repeats-empty", lambda: (counts(0),)),
            Sample("error-repeats-2d", lambda: (counts(6).reshape(2, 3),)),
            Sample("error-repeats-float", lambda: (make((3,)),)),
            Sample("error-repeats-negative", lambda: (torch.tensor([1, -1, 2], device=device),)),
            Sample("error-self-tensor-size", lambda: (make((rows, cols)), counts(cols + 1)), kwargs={"dim": 1}),
            Sample("error-self-int-negative", lambda: (make((rows, cols)), -1), kwargs={"dim": 1}),
        ]

    return with_extra(dtype, core, extra)
