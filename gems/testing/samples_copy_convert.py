"""Samples and perf inputs of copy_ and _to_copy (gems/ops/copy): every layout, and conversions between
dtypes.

Each ``*_samples()`` returns a generator with the shared signature ``samples(dtype, device, quick)``; every
sample is lazy. Conversions draw values every pair converts the same way in ATen on every device:
floats within [-4, 4) (into integers: truncated; into uint8: negative values wrap through int64), integers within
[-100, 100], and, into a narrower integer, int64 values past its range (they wrap). Floats an integer dtype cannot
hold (NaN, infinities, 1e10) have no defined conversion in ATen and are not drawn for those pairs.
"""

from __future__ import annotations

import torch

from gems.dtypes import ALL, name
from gems.spec import PerfSpec, Sample
from gems.testing.perf_inputs import tensor_bytes
from gems.testing.samples import make_tensor, shape_for, special_values, strided
from gems.testing.samples_copy_common import CHANNELS_LAST, NCHW, maker, other_dtype

_NARROW_INTS = (torch.int8, torch.int16, torch.int32, torch.uint8)


def _reversed_dims(t):
    """A view with the dimensions in reverse order: none of them merges with its neighbour."""
    return t.permute(*range(t.dim() - 1, -1, -1))


def _special_target(dtype):
    if dtype.is_floating_point:
        return torch.float32 if dtype == torch.float64 else torch.float64
    return other_dtype(dtype)


def _wrapping_int64(shape, device):
    """int64 values past every narrower integer range (2^40 + small), which a narrowing conversion wraps."""
    return make_tensor(shape, torch.int64, device) + (1 << 40)


# --------------------------------------------------------------------------- copy_


def copy_samples():
    def samples(dtype, device, quick):
        mk = maker(dtype, device)
        shape = shape_for(quick)
        rows, cols = shape
        call = torch.Tensor.copy_

        def pair(dst, src):
            return lambda: (dst(), src())

        same = lambda s: (lambda: mk(s))  # noqa: E731
        cases = [
            Sample("contiguous", pair(same(shape), same(shape)), call=call),
            Sample("noncontiguous-transposed", pair(same(shape), lambda: mk(shape[::-1]).t()), call=call),
            Sample("noncontiguous-strided", pair(same(shape), lambda: strided(shape, dtype, device)), call=call),
            Sample("transposed-destination", pair(lambda: mk(shape[::-1]).t(), same(shape)), call=call),
            Sample("strided-destination", pair(lambda: strided(shape, dtype, device), same(shape)), call=call),
            Sample("both-transposed", pair(lambda: mk(shape[::-1]).t(), lambda: mk(shape[::-1]).t()), call=call),
            Sample("broadcast-row", pair(same(shape), same((cols,))), call=call),
            Sample("broadcast-column", pair(same(shape), same((rows, 1))), call=call),
            Sample("broadcast-0d", pair(same(shape), same(())), call=call),
            Sample("0d", pair(same(()), same(())), call=call),
            Sample("empty", pair(same((0, cols)), same((0, cols))), call=call),
            Sample("special-values", lambda: (mk((len(special_values(dtype, "cpu")),)), special_values(dtype, device)),
                   call=call),
            Sample("3d-permuted", pair(same((3, 5, 7)), lambda: mk((5, 7, 3)).permute(2, 0, 1)), call=call),
            Sample("channels-last-destination", pair(lambda: mk(NCHW).contiguous(memory_format=CHANNELS_LAST),
                                                     same(NCHW)), call=call),
            Sample("channels-last-source", pair(same(NCHW), lambda: mk(NCHW).contiguous(memory_format=CHANNELS_LAST)),
                   call=call),
            Sample("6d-unmergeable", pair(same((2, 3, 2, 3, 2, 3)), lambda: _reversed_dims(mk((3, 2, 3, 2, 3, 2)))),
                   call=call),
            Sample("9d-unmergeable", pair(same((2,) * 9), lambda: _reversed_dims(mk((2,) * 9))), call=call),
            Sample("self-copy", lambda: (mk(shape),), call=lambda x: x.copy_(x)),
            Sample("same-view", lambda: (mk(shape),), call=lambda x: x.copy_(x.view(x.shape))),
            Sample("non-blocking", pair(same(shape), same(shape)), call=lambda d, s: d.copy_(s, non_blocking=True)),
            Sample("broadcast-error", pair(same((3,)), same((4,))), call=call),
            Sample("broadcast-rank-error", pair(same((cols,)), same((1, cols))), call=call),
            Sample("expanded-destination-error", pair(same((1, cols)), same(shape)),
                   call=lambda d, s: d.expand(s.shape).copy_(s)),
            Sample("overlap-error", lambda: (mk((cols, cols)),), call=lambda x: x.copy_(x.t())),
        ]
        if dtype != torch.bool:  # negative views: made in the call (conformance copies arguments resolved)
            cases += [Sample("from-negative-view", pair(same(shape), same(shape)),
                             call=lambda d, s: d.copy_(torch._neg_view(s))),
                      Sample("into-negative-view", pair(same(shape), same(shape)),
                             call=lambda d, s: torch._neg_view(torch._neg_view(d).copy_(s))),
                      Sample("from-negative-view-converted", pair(same(shape), lambda: mk(shape, other_dtype(dtype))),
                             call=lambda d, s: d.copy_(torch._neg_view(s)))]
        if dtype.is_floating_point:
            cases.append(Sample("grad", pair(same(shape), lambda: mk(shape).requires_grad_()), call=call, grad=True))
            cases.append(Sample("from-float64-special-values", lambda: (
                mk((len(special_values(torch.float64, "cpu")),)), special_values(torch.float64, device)), call=call))
        for source in ALL:
            if source != dtype:
                cases.append(Sample(f"from-{name(source)}", pair(same(shape), lambda s=source: mk(shape, s)),
                                    call=call))
        if dtype == torch.float32:  # complex: left to ATen (its real part, with a warning)
            cases.append(Sample("from-complex64", pair(same(shape), lambda: torch.complex(mk(shape), mk(shape))),
                                call=call))
        if dtype in _NARROW_INTS:
            cases.append(Sample("from-int64-wrapping", pair(same(shape), lambda: _wrapping_int64(shape, device)),
                                call=call))
        return cases

    return samples


def copy_perf(shapes="copy"):
    """copy_ of one dtype: [n] contiguous into contiguous, [rows, cols] from a transposed source."""

    def inputs(shape, dtype, device):
        source = make_tensor(shape[::-1], dtype, device).t() if len(shape) == 2 else make_tensor(shape, dtype, device)
        return Sample("perf", (torch.empty(shape, dtype=dtype, device=device), source), call=torch.Tensor.copy_)

    return PerfSpec(inputs=inputs, shapes=shapes, bytes=lambda sample, result: tensor_bytes(*sample.args))


# --------------------------------------------------------------------------- _to_copy


def to_copy_samples():
    def samples(dtype, device, quick):
        mk = maker(dtype, device)
        shape = shape_for(quick)
        other = other_dtype(dtype)
        aten = torch.ops.aten
        one = lambda s: (lambda: (mk(s),))  # noqa: E731
        cases = [
            Sample("contiguous", one(shape)),
            Sample("noncontiguous-transposed", lambda: (mk(shape[::-1]).t(),), {"dtype": other}),
            Sample("noncontiguous-strided", lambda: (strided(shape, dtype, device),), {"dtype": other}),
            Sample("contiguous-format", lambda: (mk(shape[::-1]).t(),),
                   {"dtype": other, "memory_format": torch.contiguous_format}),
            Sample("channels-last", one(NCHW), {"memory_format": CHANNELS_LAST}),
            Sample("channels-last-preserved", lambda: (mk(NCHW).contiguous(memory_format=CHANNELS_LAST),),
                   {"dtype": other}),
            Sample("channels-last-rank-error", one(shape), {"memory_format": CHANNELS_LAST}),
            Sample("0d", one(()), {"dtype": other}),
            Sample("empty", one((0, 5)), {"dtype": other}),
            Sample("3d", one((3, 5, 7)), {"dtype": other}),
            # Into another float: ATen defines no integer for NaN or an infinity.
            Sample("special-values", lambda: (special_values(dtype, device),), {"dtype": _special_target(dtype)}),
            Sample("same-device", one(shape), call=lambda x: aten._to_copy(x, dtype=other, device=x.device)),
            Sample("non-blocking", one(shape), call=lambda x: x.to(other, non_blocking=True)),
            Sample("out", lambda: (mk(shape), torch.empty(shape, dtype=other, device=device)),
                   call=lambda x, o: aten._to_copy.out(x, out=o), expects="_to_copy.out"),
            Sample("out-resize", lambda: (mk(shape), torch.empty(3, dtype=other, device=device)),
                   call=lambda x, o: aten._to_copy.out(x, out=o), expects="_to_copy.out"),
            Sample("out-noncontiguous", lambda: (mk(shape), strided(shape, other, device)),
                   call=lambda x, o: aten._to_copy.out(x, out=o), expects="_to_copy.out"),
        ]
        if dtype.is_floating_point:
            cases.append(Sample("grad", lambda: (mk(shape).requires_grad_(),), call=lambda x: x.to(torch.float64)
                                if dtype != torch.float64 else x.to(torch.float32), grad=True))
        for target in ALL:
            if target != dtype:
                cases.append(Sample(f"to-{name(target)}", one(shape), call=lambda x, t=target: x.to(t)))
        if dtype is torch.int64:
            cases += [Sample(f"wrapping-to-{name(t)}", lambda: (_wrapping_int64(shape, device),),
                             call=lambda x, t=t: x.to(t)) for t in _NARROW_INTS]
        return cases

    return samples


def to_copy_perf(shapes="copy"):
    """_to_copy fp32 -> bf16, fp16/bf16 -> fp32 (what mixed precision does); [rows, cols]: a transposed source
    into a contiguous result."""

    def inputs(shape, dtype, device):
        target = torch.bfloat16 if dtype == torch.float32 else torch.float32
        if len(shape) == 2:
            return Sample("perf", (make_tensor(shape[::-1], dtype, device).t(),),
                          {"dtype": target, "memory_format": torch.contiguous_format})
        return Sample("perf", (make_tensor(shape, dtype, device),), {"dtype": target})

    return PerfSpec(inputs=inputs, shapes=shapes, bytes=lambda sample, result: tensor_bytes(*sample.args, result))
