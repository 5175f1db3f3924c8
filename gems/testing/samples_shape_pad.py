"""Samples of the padding operators: constant_pad_nd and the reflection / replication paddings
(padding_samples(kind, dims), their backwards included)."""

from __future__ import annotations

import math

import torch

from gems.spec import Sample
from gems.testing.samples import shape_for, special_values, strided, transposed
from gems.testing.samples_shape_common import fresh, maker, specials_2d, with_extra


def _specials_shaped(shape, dtype, device):
    """The special values repeated over ``shape``."""
    values = special_values(dtype, device)
    count = math.prod(shape)
    return values.repeat(-(-count // values.numel()))[:count].reshape(shape)


def constant_pad_nd_samples(dtype, device, quick):
    rows, cols = shape_for(quick)
    make = maker(dtype, device)
    value = -2.5 if dtype.is_floating_point else (True if dtype is torch.bool else 7)
    pad = torch.nn.functional.pad
    core = [
        Sample("last-dim", lambda: (make((rows, cols)), (2, 3), value)),
        Sample("two-dims", lambda: (make((rows, cols)), (1, 2, 3, 0))),
        Sample("noncontiguous", lambda: (transposed((rows, cols), dtype, device), (1, 1, 2, 2), value)),
        Sample("special-values", lambda: (specials_2d(dtype, device), (1, 1), value)),
        Sample("functional-pad", lambda: (make((2, 3, 5)), (1, 2, 0, 1)), kwargs={"value": value}, call=pad),
        Sample("out", lambda: (make((rows, cols)), (2, 3), value), expects="constant_pad_nd.out",
               call=lambda x, p, v: torch.ops.aten.constant_pad_nd.out(x, p, v, out=fresh(x))),
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

    return with_extra(dtype, core, extra)


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
        make = maker(dtype, device)
        batched, unbatched = (2, 3, *spatial), (3, *spatial)
        core = [
            Sample("batched", lambda: (make(batched), pads)),
            Sample("unbatched", lambda: (make(unbatched), pads)),
            Sample("noncontiguous", lambda: (make((*spatial[::-1], 3, 2)).permute(*range(dims + 1, -1, -1)), pads)),
            Sample("out", lambda: (make(batched), pads), expects=f"{name}.out",
                   call=lambda x, p: forward_out(x, p, out=fresh(x))),
        ]
        if dtype.is_floating_point:
            padded = [n + pads[2 * k] + pads[2 * k + 1] for k, n in enumerate(spatial[::-1])][::-1]
            core += [
                Sample("grad", lambda: (make(batched, grad=True), pads), grad=True),
                Sample("backward", lambda: (make((2, 3, *padded)), make(batched), pads), expects=f"{name}_backward",
                       call=backward.default),
                Sample("backward-grad-input", lambda: (make((2, 3, *padded)), make(batched), pads),
                       expects=f"{name}_backward.grad_input",
                       call=lambda g, x, p: backward.grad_input(g, x, p, grad_input=fresh(g))),
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

        return with_extra(dtype, core, extra)

    return samples
