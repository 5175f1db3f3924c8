"""Samples and perf inputs of the factories (gems/ops/creation): calls with an empty "like" tensor, sized
factories with their out= forms, the ``*_like`` factories."""

from __future__ import annotations

import torch

from gems.spec import PerfSpec, Sample
from gems.testing.perf_inputs import tensor_bytes
from gems.testing.samples import make_tensor, shape_for
from gems.testing.samples_extra_common import strided_empty

# --------------------------------------------------------------------------- creation


def creation_samples(make_calls):
    """Samples for factories. A factory takes no input tensor, so each sample carries an empty
    tensor of the case's dtype and device (the "like" argument) that the call reads dtype and device
    from; the oracle's float64 CPU copy of it makes the oracle a float64 CPU factory call.

    make_calls(dtype, device, quick) -> [(variant, call(like, *tensors), expects, tensors)], where
    tensors are more arguments (an out= tensor, say), or a function of no arguments that makes them.
    """

    def samples(dtype, device, quick):
        def build(tensors):
            return lambda: (torch.empty(0, dtype=dtype, device=device),
                            *(tensors() if callable(tensors) else tensors))

        return [Sample(variant, build(tensors), call=call, expects=expects)
                for variant, call, expects, tensors in make_calls(dtype, device, quick)]

    return samples


def factory_calls(factory, overload, value_args=()):
    """make_calls for :func:`creation_samples` of a sized factory (``factory(size, *value_args, dtype=,
    device=)``): shapes, a negative size, and the out= forms (overload ``{overload}.out``)."""

    def make(dtype, device, quick):
        shape = shape_for(quick)
        calls = []
        for variant, size in (("contiguous", shape), ("1d", (37,)), ("0d", ()), ("empty", (0, 5)),
                              ("3d", (3, 5, 7))):
            calls.append((variant, lambda like, s=size: factory(s, *value_args, dtype=like.dtype, device=like.device),
                          overload, ()))
        calls.append(("negative-size-error", lambda like: factory((-1, 3), *value_args, dtype=like.dtype,
                                                                   device=like.device), None, ()))
        for variant, out in out_tensors(shape, dtype, device):
            calls.append((variant, lambda like, o: factory(shape, *value_args, out=o), f"{overload}.out",
                          lambda out=out: (out(),)))
        return calls

    return make


def out_tensors(shape, dtype, device):
    """[(variant suffix, function making the out tensor)]: the right shape, a wrong size to resize, a
    strided view."""
    return [("out", lambda: torch.empty(shape, dtype=dtype, device=device)),
            ("out-resize", lambda: torch.empty((2,), dtype=dtype, device=device)),
            ("out-noncontiguous", lambda: strided_empty(shape, dtype, device))]


def like_samples(call, overload, extra_args=(), fill_checks=()):
    """Samples for ``*_like`` factories: the input's layout is kept (transposed, strided) and its
    values ignored; dtype= changes the result type. fill_checks: [(variant, value)] extra fills."""

    def samples(dtype, device, quick):
        shape = shape_for(quick)
        rows, cols = shape
        other = torch.float64 if dtype != torch.float64 else torch.int32
        make = lambda s: make_tensor(s, dtype, device)

        def one(s, view=lambda t: t, tail=extra_args):
            return lambda: (view(make(s)), *tail)

        transpose, stride = (lambda t: t.t()), (lambda t: t[:, ::2])
        cases = [
            Sample("contiguous", one(shape), expects=overload, call=call),
            Sample("noncontiguous-transposed", one((cols, rows), transpose), expects=overload, call=call),
            Sample("noncontiguous-strided", one((rows, cols * 2), stride), expects=overload, call=call),
            Sample("0d", one(()), expects=overload, call=call),
            Sample("empty", one((0, cols)), expects=overload, call=call),
            Sample("3d", one((3, 5, 7)), expects=overload, call=call),
            Sample("dtype-kwarg", one(shape), {"dtype": other}, expects=overload, call=call),
            Sample("contiguous-format", one((cols, rows), transpose), {"memory_format": torch.contiguous_format},
                   expects=overload, call=call),
        ]
        for variant, value in fill_checks:
            cases.append(Sample(variant, one(shape, tail=(value,)), expects=overload, call=call))
        return cases

    return samples


def creation_perf(call, shapes="pointwise"):
    """Perf inputs for a factory: the call gets an empty "like" tensor and the shape; bytes = output."""

    def inputs(shape, dtype, device):
        return Sample("perf", (torch.empty(0, dtype=dtype, device=device), tuple(shape)),
                      call=call)

    def bytes_moved(sample, result):
        return tensor_bytes(result)

    return PerfSpec(inputs=inputs, shapes=shapes, bytes=bytes_moved)
