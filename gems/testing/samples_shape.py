"""Samples and perf inputs of the shape family (gems/ops/shape/).

These operators move elements without computing on them: one kernel serves every dtype of a given
element size. So every dtype runs the core variants (contiguous, non-contiguous, special values, out=,
the gradient for floats), and FULL_DTYPE runs the rest too (layouts, empty and edge shapes, type
promotion, the errors), which keeps the family's quick suite cheap on the interpreter.
"""

from __future__ import annotations

import math

import torch

from gems.spec import PerfSpec, Sample
from gems.testing.perf_inputs import tensor_bytes
from gems.testing.samples import _with_out, make_tensor, shape_for, special_values, strided, transposed
from gems.testing.samples_extra import other_device

FULL_DTYPE = torch.float32


def generator(name):
    """The sample generator of this module named ``name`` (gems.ops.shape.shared.shape_samples refers to it)."""
    return globals()[name]


def _maker(dtype, device):
    def make(shape, d=dtype, grad=False):
        t = make_tensor(shape, d, device)
        return t.requires_grad_() if grad else t

    return make


def _fresh(like, dtype=None):
    """An empty out= tensor for a result like ``like`` (the op resizes it)."""
    return torch.empty(0, dtype=like.dtype if dtype is None else dtype, device=like.device)


def _with_extra(dtype, core, extra):
    """core for every dtype, core + extra (a function making them) for FULL_DTYPE."""
    return core + extra() if dtype == FULL_DTYPE else core


def _specials_2d(dtype, device):
    values = special_values(dtype, device)
    return values.reshape(2, -1)


def _specials_shaped(shape, dtype, device):
    """The special values repeated over ``shape``."""
    values = special_values(dtype, device)
    count = math.prod(shape)
    return values.repeat(-(-count // values.numel()))[:count].reshape(shape)


# --------------------------------------------------------------------------- cat, stack, hstack, vstack


def cat_samples(dtype, device, quick):
    rows, cols = shape_for(quick)
    make = _maker(dtype, device)

    def joined(*shapes, dim=0, grad=False):
        return lambda: ([make(s, grad=grad) for s in shapes], dim)

    core = [
        Sample("dim0", joined((rows, cols), (5, cols))),
        Sample("last-dim", joined((rows, cols), (rows, 4), (rows, 9), dim=-1)),
        Sample("noncontiguous", lambda: ([transposed((rows, cols), dtype, device), strided((rows, cols), dtype, device),
                                          make((rows, 3))], 1)),
        Sample("special-values", lambda: ([_specials_2d(dtype, device), make((2, 3))], 1)),
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

    return _with_extra(dtype, core, extra)


def stack_samples(dtype, device, quick):
    rows, cols = shape_for(quick)
    make = _maker(dtype, device)

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

    return _with_extra(dtype, core, extra)


def _atleast_stack_samples(dtype, device, quick):
    """hstack / vstack: the calls take only the list (and out=)."""
    rows, cols = shape_for(quick)
    make = _maker(dtype, device)

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

    return _with_extra(dtype, core, extra)


hstack_samples = vstack_samples = _atleast_stack_samples


def flip_samples(dtype, device, quick):
    rows, cols = shape_for(quick)
    make = _maker(dtype, device)
    core = [
        Sample("dim0", lambda: (make((rows, cols)), (0,))),
        Sample("all-dims", lambda: (make((3, 5, 7)), (0, 1, 2))),
        Sample("noncontiguous", lambda: (transposed((rows, cols), dtype, device), (-1,))),
        Sample("special-values", lambda: (_specials_2d(dtype, device), (1,))),
        # Whole 16-byte groups of columns: the copy kernel loads them forward and reverses them in registers.
        Sample("last-dim-groups", lambda: (make((5, 64)), (-1,))),
        Sample("out", lambda: (make((rows, cols)), (1,)), expects="flip.out",
               call=lambda x, dims: torch.ops.aten.flip.out(x, dims, out=_fresh(x))),
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
                   call=lambda x, dims: torch.ops.aten.flip.out(x, dims, out=_fresh(x, torch.int32))),
        ]

    return _with_extra(dtype, core, extra)


def roll_samples(dtype, device, quick):
    rows, cols = shape_for(quick)
    make = _maker(dtype, device)
    core = [
        Sample("dim0", lambda: (make((rows, cols)), (3,), (0,))),
        Sample("two-dims", lambda: (make((rows, cols)), (-2, 20), (0, 1))),
        Sample("flattened", lambda: (make((rows, cols)), (5,))),
        Sample("noncontiguous", lambda: (transposed((rows, cols), dtype, device), (4,), (1,))),
        Sample("special-values", lambda: (_specials_2d(dtype, device), (3,), (1,))),
        Sample("out", lambda: (make((rows, cols)), (2,), (1,)), expects="roll.out",
               call=lambda x, s, d: torch.ops.aten.roll.out(x, s, d, out=_fresh(x))),
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
                   call=lambda x, s: torch.ops.aten.roll.out(x, s, out=_fresh(x))),
            Sample("error-no-shifts", lambda: (make((rows, cols)), (), ())),
            Sample("error-align", lambda: (make((rows, cols)), (1, 2), (0,))),
            Sample("error-align-flattened", lambda: (make((rows, cols)), (1, 2))),
            Sample("error-dim", lambda: (make((rows, cols)), (1,), (2,))),
            Sample("error-0d-dim", lambda: (make(()), (1,), (0,))),
        ]

    return _with_extra(dtype, core, extra)


def repeat_samples(dtype, device, quick):
    rows, cols = shape_for(quick)
    make = _maker(dtype, device)
    core = [
        Sample("both-dims", lambda: (make((rows, cols)), (2, 3))),
        Sample("new-dims", lambda: (make((rows, cols)), (2, 1, 2))),
        Sample("noncontiguous", lambda: (transposed((rows, cols), dtype, device), (1, 2))),
        Sample("special-values", lambda: (_specials_2d(dtype, device), (2, 2))),
        Sample("out", lambda: (make((rows, cols)), (2, 1)), expects="repeat.out",
               call=lambda x, r: torch.ops.aten.repeat.out(x, r, out=_fresh(x))),
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
            Sample("error-too-few", lambda: (make((rows, cols)), (2,))),
            Sample("error-negative", lambda: (make((rows, cols)), (2, -1))),
        ]

    return _with_extra(dtype, core, extra)


def tile_samples(dtype, device, quick):
    rows, cols = shape_for(quick)
    make = _maker(dtype, device)
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

    return _with_extra(dtype, core, extra)


def constant_pad_nd_samples(dtype, device, quick):
    rows, cols = shape_for(quick)
    make = _maker(dtype, device)
    value = -2.5 if dtype.is_floating_point else (True if dtype is torch.bool else 7)
    pad = torch.nn.functional.pad
    core = [
        Sample("last-dim", lambda: (make((rows, cols)), (2, 3), value)),
        Sample("two-dims", lambda: (make((rows, cols)), (1, 2, 3, 0))),
        Sample("noncontiguous", lambda: (transposed((rows, cols), dtype, device), (1, 1, 2, 2), value)),
        Sample("special-values", lambda: (_specials_2d(dtype, device), (1, 1), value)),
        Sample("functional-pad", lambda: (make((2, 3, 5)), (1, 2, 0, 1)), kwargs={"value": value}, call=pad),
        Sample("out", lambda: (make((rows, cols)), (2, 3), value), expects="constant_pad_nd.out",
               call=lambda x, p, v: torch.ops.aten.constant_pad_nd.out(x, p, v, out=_fresh(x))),
    ]
    if dtype.is_floating_point:
        core.append(Sample("grad", lambda: (make((rows, cols), grad=True), (1, 2, -1, 3), value), grad=True))

    def extra():
        return [
            Sample("negative-pads", lambda: (make((rows, cols)), (-2, 1, 3, -4))),
            Sample("crop-only", lambda: (make((rows, cols)), (-2, -3))),
            Sample("zero-pads", lambda: (make((rows, cols)), (0, 0))),
            Sample("crop-to-empty", lambda: (make((rows, cols)), (-9, -8))),
            Sample("3d-all-dims", lambda: (make((3, 5, 7)), (1, 1, 0, 2, 3, 1), value)),
            Sample("batch", lambda: (make((2, 2, 3, 4, 5)), (1, 1), value)),
            Sample("1d", lambda: (make((cols,)), (3, 3))),
            Sample("empty", lambda: (make((0, cols)), (1, 1, 2, 2), value)),
            Sample("strided", lambda: (strided((rows, cols), dtype, device), (2, 2), value)),
            Sample("channels-last", lambda: (make((2, 3, 4, 5)).to(memory_format=torch.channels_last), (1, 2, 2, 1))),
            Sample("nan-value", lambda: (make((rows, cols)), (1, 1), float("nan"))),
            Sample("int-value-overflow", lambda: (make((rows, cols), torch.int8), (1, 1), 300)),
            Sample("int-value-truncated", lambda: (make((rows, cols), torch.int32), (1, 1), 2.75)),
            Sample("float64-value", lambda: (make((rows, cols), torch.float64), (1, 1), 0.1)),
            Sample("functional-pad-reflect", lambda: (make((2, 3, 5)), (2, 1)), kwargs={"mode": "reflect"}, call=pad,
                   expects="reflection_pad1d"),
            Sample("functional-pad-replicate", lambda: (make((2, 3, 4, 5)), (2, 1, 1, 3)), kwargs={"mode": "replicate"},
                   call=pad, expects="replication_pad2d"),
            Sample("error-odd-pad", lambda: (make((rows, cols)), (1, 1, 1))),
            Sample("error-long-pad", lambda: (make((rows, cols)), (1, 1, 1, 1, 1, 1))),
            Sample("error-negative-size", lambda: (make((rows, cols)), (-9, -9))),
            Sample("error-negative-size-mixed", lambda: (make((rows, cols)), (-20, 2))),
        ]

    return _with_extra(dtype, core, extra)


def padding_samples(kind, dims):
    """The samples of {kind}_pad{dims}d: the forward over batched, unbatched and strided inputs, out=, the
    backward through autograd and called directly (with grad_input=), and ATen's errors."""
    name = f"{kind}_pad{dims}d"
    forward_out = getattr(torch.ops.aten, name).out
    backward = getattr(torch.ops.aten, f"{name}_backward")
    reflected = kind == "reflection"
    spatial = {1: (9,), 2: (5, 7), 3: (3, 4, 5)}[dims]
    pads = {1: (2, 3), 2: (2, 3, 1, 0), 3: (2, 1, 1, 0, 0, 2)}[dims]
    wide = {1: (4, 8), 2: (4, 6, 3, 4), 3: (2, 1, 3, 2, 4, 3)}[dims]  # the largest pads reflection allows
    negative = {1: (-2, 3), 2: (-1, 2, 1, -2), 3: (1, -1, -1, 1, 2, 0)}[dims]

    def samples(dtype, device, quick):
        make = _maker(dtype, device)
        batched, unbatched = (2, 3, *spatial), (3, *spatial)
        core = [
            Sample("batched", lambda: (make(batched), pads)),
            Sample("unbatched", lambda: (make(unbatched), pads)),
            Sample("noncontiguous", lambda: (make((*spatial[::-1], 3, 2)).permute(*range(dims + 1, -1, -1)), pads)),
            Sample("out", lambda: (make(batched), pads), expects=f"{name}.out",
                   call=lambda x, p: forward_out(x, p, out=_fresh(x))),
        ]
        if dtype.is_floating_point:
            padded = [n + pads[2 * k] + pads[2 * k + 1] for k, n in enumerate(spatial[::-1])][::-1]
            core += [
                Sample("grad", lambda: (make(batched, grad=True), pads), grad=True),
                Sample("backward", lambda: (make((2, 3, *padded)), make(batched), pads), expects=f"{name}_backward",
                       call=backward.default),
                Sample("backward-grad-input", lambda: (make((2, 3, *padded)), make(batched), pads),
                       expects=f"{name}_backward.grad_input",
                       call=lambda g, x, p: backward.grad_input(g, x, p, grad_input=_fresh(g))),
            ]
        if dtype == torch.float16:
            core.append(Sample("grad-wide-pads", lambda: (make(batched, grad=True), wide), grad=True))

        def extra():
            cases = [
                Sample("wide-pads", lambda: (make(batched), wide)),
                Sample("negative-pads", lambda: (make(batched), negative)),
                Sample("grad-negative-pads", lambda: (make(batched, grad=True), negative), grad=True),
                Sample("grad-wide-pads", lambda: (make(batched, grad=True), wide), grad=True),
                Sample("empty-batch", lambda: (make((0, 3, *spatial)), pads)),
                Sample("special-values", lambda: (_specials_shaped(batched, dtype, device), pads)),
                Sample("error-pad-length", lambda: (make(batched), pads + (1,))),
                Sample("error-rank", lambda: (make((2, *batched)), pads)),
                Sample("error-empty-dim", lambda: (make((2, 0, *spatial)), pads)),
                Sample("error-too-small", lambda: (make(batched), sum(((-n, 0) for n in spatial[::-1]), ()))),
                Sample("error-bool-input", lambda: (make(batched, torch.bool), pads)),
                Sample("error-backward-shape", lambda: (make(batched), make(batched), pads), call=backward.default),
                Sample("error-backward-int", lambda: (make(batched, torch.int64), make(batched, torch.int64), pads),
                       call=backward.default),
            ]
            if dims > 1:  # ATen refuses a padding only when it leaves no dim: one dim of size 0 is an empty result
                cases.append(Sample("empty-width", lambda: (make(batched), (-spatial[-1], 0) + pads[2:])))
            if dims == 2:
                cl = lambda: (make(batched).to(memory_format=torch.channels_last), pads)  # noqa: E731
                cases += [Sample("channels-last", cl),
                          Sample("grad-channels-last", lambda: (cl()[0].requires_grad_(), pads), grad=True)]
            if reflected:
                cases.append(Sample("error-pad-too-large", lambda: (make(batched), (spatial[-1], 0) + pads[2:])))
            return cases

        return _with_extra(dtype, core, extra)

    return samples


def slice_backward_samples(dtype, device, quick):
    rows, cols = shape_for(quick)
    make = _maker(dtype, device)
    core = [
        Sample("step-1", lambda: (make((rows, 10)), (rows, cols), 1, 3, 13, 1)),
        Sample("step-3", lambda: (make((rows, 5)), (rows, cols), 1, 2, 17, 3)),
        Sample("noncontiguous", lambda: (transposed((5, cols), dtype, device), (rows, cols), 0, 1, 11, 2)),
        Sample("out", lambda: (make((rows, 5)), (rows, cols), 1, 2, 17, 3), expects="slice_backward.out",
               call=lambda g, *a: torch.ops.aten.slice_backward.out(g, *a, out=_fresh(g))),
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

    return _with_extra(dtype, core, extra)


def select_backward_samples(dtype, device, quick):
    rows, cols = shape_for(quick)
    make = _maker(dtype, device)
    core = [
        Sample("dim0", lambda: (make((cols,)), (rows, cols), 0, 3)),
        Sample("last-dim", lambda: (make((3, 5)), (3, 5, 7), -1, -2)),
        Sample("noncontiguous", lambda: (transposed((3, 7), dtype, device), (3, 5, 7), 1, 4)),
        Sample("out", lambda: (make((cols,)), (rows, cols), 0, 3), expects="select_backward.out",
               call=lambda g, *a: torch.ops.aten.select_backward.out(g, *a, out=_fresh(g))),
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

    return _with_extra(dtype, core, extra)


def _scatter_samples(dtype, device, quick, overload, cases, extra_cases):
    """Samples of a *_scatter operator: cases and extra_cases are (variant, self shape, src shape, args)."""
    make = _maker(dtype, device)
    fn = getattr(torch.ops.aten, overload)

    def sample(variant, shape, src, args, layout=None, src_dtype=None, grad=False):
        def build():
            x = make(shape, grad=grad) if layout is None else layout(make(shape[::-1])).requires_grad_(grad)
            return (x, make(src, src_dtype or dtype, grad=grad), *args)

        return Sample(variant, build, grad=grad)

    core = [sample(*c) for c in cases]
    core.append(Sample("out", core[0].args, expects=f"{overload}.out",
                       call=lambda x, src, *a: fn.out(x, src, *a, out=_fresh(x))))
    if dtype.is_floating_point:
        variant, shape, src, args = cases[0]
        core.append(sample("grad", shape, src, args, grad=True))

    def extra():
        return [sample(*c) for c in extra_cases]

    return _with_extra(dtype, core, extra)


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
    make = _maker(dtype, device)
    windows = lambda n, size, step: (n - size) // step + 1  # noqa: E731
    core = [
        Sample("overlapping", lambda: (make((rows, windows(cols, 5, 2), 5)), (rows, cols), 1, 5, 2)),
        Sample("disjoint", lambda: (make((windows(rows, 3, 4), cols, 3)), (rows, cols), 0, 3, 4)),
        Sample("noncontiguous", lambda: (make((5, windows(cols, 5, 2), rows)).transpose(0, 2), (rows, cols), 1, 5, 2)),
        Sample("out", lambda: (make((rows, windows(cols, 5, 2), 5)), (rows, cols), 1, 5, 2),
               expects="unfold_backward.out",
               call=lambda g, *a: torch.ops.aten.unfold_backward.out(g, *a, out=_fresh(g))),
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

    return _with_extra(dtype, core, extra)


def _shuffle_samples(fn, dtype, device, quick, small, big, empty=True):
    """pixel_shuffle / pixel_unshuffle: ``small`` and ``big`` are inputs (shape, factor) the op accepts."""
    make = _maker(dtype, device)
    overload = f"{fn.__name__}.out"
    op = getattr(torch.ops.aten, fn.__name__)
    core = [
        Sample("batched", lambda: (make(small[0]), small[1])),
        Sample("factor-3", lambda: (make(big[0]), big[1])),
        Sample("noncontiguous", lambda: (make(small[0][::-1]).permute(3, 2, 1, 0), small[1])),
        Sample("out", lambda: (make(small[0]), small[1]), expects=overload,
               call=lambda x, r: op.out(x, r, out=_fresh(x))),
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

    return _with_extra(dtype, core, extra)


def pixel_shuffle_samples(dtype, device, quick):
    return _shuffle_samples(torch.pixel_shuffle, dtype, device, quick, ((2, 12, 3, 5), 2), ((1, 18, 4, 3), 3))


def pixel_unshuffle_samples(dtype, device, quick):
    # No empty input: ATen's CPU kernel returns an empty input unchanged (a clone), its CUDA (composite) kernel
    # returns the unshuffled shape, which gems follows; the CPU stands in for the oracle here.
    return _shuffle_samples(torch.pixel_unshuffle, dtype, device, quick, ((2, 3, 6, 10), 2), ((1, 2, 9, 6), 3),
                            empty=False)


def repeat_interleave_samples(dtype, device, quick):
    """repeats tensors in int64 and int32 (the .Tensor overload), and tensors of every dtype repeated through
    the self_Tensor composite (which runs it) and the self_int one (a clone of an expanded view)."""
    rows, cols = shape_for(quick)
    make = _maker(dtype, device)
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
                   call=lambda r: torch.ops.aten.repeat_interleave.Tensor_out(r, out=_fresh(r))),
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

    return _with_extra(dtype, core, extra)


# --------------------------------------------------------------------------- perf


def _perf_sample(kind, shape, dtype, device):
    """The call timed for ``kind`` at a perf/shapes.yaml shape: [rows, cols] on the "shape" key (the result is
    rows x cols), [N, C, H, W] on "shape_image"."""
    make = _maker(dtype, device)
    if kind.startswith(("reflection-pad", "replication-pad")):  # "reflection-pad2d"...: 3 pixels each side
        dims = int(kind[-2])
        n, c, h, w = shape
        x = make({1: (n, c, h * w - 6), 2: (n, c, h - 6, w - 6), 3: (n, c // 4, 4, h - 6, w - 6)}[dims])
        return Sample("perf", (x, (3, 3) * dims))
    if kind == "pixel-shuffle":
        n, c, h, w = shape
        return Sample("perf", (make((n, c, h // 2, w // 2)), 2))  # C divisible by 4: the result is (N, C/4, H, W)
    if kind == "pixel-unshuffle":
        return Sample("perf", (make(shape), 2))
    rows, cols = shape
    half = cols // 2
    if kind == "cat":  # two halves of each row (a Llama KV-cache append joins along a middle dim: the same copy)
        return Sample("perf", ([make((rows, half)), make((rows, cols - half))], -1))
    if kind == "flip":  # the last dim: loads run backwards
        return Sample("perf", (make((rows, cols)), (-1,)))
    if kind == "roll":
        return Sample("perf", (make((rows, cols)), (rows // 3, cols // 5), (0, 1)))
    if kind == "repeat":
        return Sample("perf", (make((rows // 2, half)), (2, 2)))
    if kind == "constant-pad":  # 1 column each side of every row
        return Sample("perf", (make((rows, cols - 2)), (1, 1), 0.5))
    if kind == "slice-backward":  # the gradient of x[:, cols/4 : 3cols/4]
        return Sample("perf", (make((rows, half)), (rows, cols), 1, cols // 4, cols // 4 + half, 1))
    raise ValueError(f"no perf inputs for {kind!r}")


def shape_perf(kind, shapes="shape"):
    """Perf inputs of the shape family: ``shapes`` names the perf/shapes.yaml key; bytes = what is read
    (every tensor argument) + what is written (the result)."""

    def inputs(shape, dtype, device):
        return _perf_sample(kind, shape, dtype, device)

    def bytes_moved(sample, result):
        tensors = [t for a in sample.args for t in (a if isinstance(a, (list, tuple)) else (a,))]
        return tensor_bytes(*tensors, result)

    return PerfSpec(inputs=inputs, shapes=shapes, bytes=bytes_moved)
