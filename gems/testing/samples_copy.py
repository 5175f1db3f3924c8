"""Sample and perf generators of the copies (gems/ops/copy) and of the creation operators added with them
(scalar_tensor, new_*, eye, linspace, logspace, one_hot, polar in gems/ops/creation).

Each ``*_samples()`` returns a generator with the shared signature ``samples(dtype, device, quick)``; every
sample is lazy. Conversions between dtypes draw values every pair converts the same way in ATen on every device:
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

CHANNELS_LAST = torch.channels_last
_NCHW = (2, 3, 5, 7)
_NARROW_INTS = (torch.int8, torch.int16, torch.int32, torch.uint8)


def _maker(dtype, device):
    return lambda shape, d=dtype, **domain: make_tensor(shape, d, device, **domain)


def _other_dtype(dtype):
    return torch.float64 if dtype != torch.float64 else torch.int32


def _reversed_dims(t):
    """A view with the dimensions in reverse order: none of them merges with its neighbour."""
    return t.permute(*range(t.dim() - 1, -1, -1))


def _special_target(dtype):
    if dtype.is_floating_point:
        return torch.float32 if dtype == torch.float64 else torch.float64
    return _other_dtype(dtype)


def _wrapping_int64(shape, device):
    """int64 values past every narrower integer range (2^40 + small), which a narrowing conversion wraps."""
    return make_tensor(shape, torch.int64, device) + (1 << 40)


# --------------------------------------------------------------------------- copy_


def copy_samples():
    def samples(dtype, device, quick):
        mk = _maker(dtype, device)
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
            Sample("channels-last-destination", pair(lambda: mk(_NCHW).contiguous(memory_format=CHANNELS_LAST),
                                                     same(_NCHW)), call=call),
            Sample("channels-last-source", pair(same(_NCHW), lambda: mk(_NCHW).contiguous(memory_format=CHANNELS_LAST)),
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
                      Sample("from-negative-view-converted", pair(same(shape), lambda: mk(shape, _other_dtype(dtype))),
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
        mk = _maker(dtype, device)
        shape = shape_for(quick)
        other = _other_dtype(dtype)
        aten = torch.ops.aten
        one = lambda s: (lambda: (mk(s),))  # noqa: E731
        cases = [
            Sample("contiguous", one(shape)),
            Sample("noncontiguous-transposed", lambda: (mk(shape[::-1]).t(),), {"dtype": other}),
            Sample("noncontiguous-strided", lambda: (strided(shape, dtype, device),), {"dtype": other}),
            Sample("contiguous-format", lambda: (mk(shape[::-1]).t(),),
                   {"dtype": other, "memory_format": torch.contiguous_format}),
            Sample("channels-last", one(_NCHW), {"memory_format": CHANNELS_LAST}),
            Sample("channels-last-preserved", lambda: (mk(_NCHW).contiguous(memory_format=CHANNELS_LAST),),
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


# --------------------------------------------------------------------------- clone and the view copies


def clone_samples():
    def samples(dtype, device, quick):
        mk = _maker(dtype, device)
        shape = shape_for(quick)
        aten = torch.ops.aten
        one = lambda s: (lambda: (mk(s),))  # noqa: E731
        transposed = lambda: (mk(shape[::-1]).t(),)  # noqa: E731
        cases = [
            Sample("contiguous", one(shape)),
            Sample("noncontiguous-transposed", transposed),
            Sample("noncontiguous-strided", lambda: (strided(shape, dtype, device),)),
            Sample("0d", one(())),
            Sample("empty", one((0, 5))),
            Sample("special-values", lambda: (special_values(dtype, device),)),
            Sample("3d-permuted", lambda: (mk((5, 7, 3)).permute(2, 0, 1),)),
            # expanded inside the call: conformance copies arguments with their strides, and no copy_ writes an
            # expanded tensor
            Sample("expanded", lambda: (mk((1, shape[1])),), call=lambda x: x.expand(shape).clone()),
            Sample("channels-last-preserved", lambda: (mk(_NCHW).contiguous(memory_format=CHANNELS_LAST),)),
            Sample("contiguous-format", transposed, {"memory_format": torch.contiguous_format}),
            Sample("channels-last", one(_NCHW), {"memory_format": CHANNELS_LAST}),
            Sample("contiguous-method", transposed, call=lambda x: x.contiguous()),
            Sample("channels-last-rank-error", one(shape), {"memory_format": CHANNELS_LAST}),
            Sample("out", lambda: (mk(shape), torch.empty(0, dtype=dtype, device=device)),
                   call=lambda x, o: aten.clone.out(x, out=o), expects="clone.out"),
            Sample("out-self", one(shape), call=lambda x: aten.clone.out(x, out=x), expects="clone.out"),
            Sample("out-wrong-dtype", lambda: (mk(shape), torch.empty(0, dtype=_other_dtype(dtype), device=device)),
                   call=lambda x, o: aten.clone.out(x, out=o)),
        ]
        if dtype.is_floating_point:
            cases.append(Sample("grad", lambda: (mk(shape[::-1]).t().requires_grad_(),), grad=True))
        if dtype != torch.bool:
            cases.append(Sample("negative-view", transposed, call=lambda x: torch._neg_view(x).clone()))
        return cases

    return samples


def resolve_neg_samples():
    """resolve_neg of negative views (made in the call: conformance copies its arguments resolved), each
    materialized by gems' clone."""

    def samples(dtype, device, quick):
        mk = _maker(dtype, device)
        shape = shape_for(quick)
        call = lambda x: torch.resolve_neg(torch._neg_view(x))  # noqa: E731
        return [Sample("contiguous", lambda: (mk(shape),), call=call, expects="clone"),
                Sample("noncontiguous-transposed", lambda: (mk(shape[::-1]).t(),), call=call, expects="clone"),
                Sample("noncontiguous-strided", lambda: (strided(shape, dtype, device),), call=call, expects="clone"),
                Sample("0d", lambda: (mk(()),), call=call, expects="clone"),
                Sample("special-values", lambda: (special_values(dtype, device),), call=call, expects="clone")]

    return samples


def clone_perf(shapes="copy"):
    """clone: [n] contiguous; [rows, cols]: ``x.t().contiguous()`` (a transposing copy)."""

    def inputs(shape, dtype, device):
        if len(shape) == 2:
            return Sample("perf", (make_tensor(shape[::-1], dtype, device).t(),),
                          {"memory_format": torch.contiguous_format})
        return Sample("perf", (make_tensor(shape, dtype, device),))

    return PerfSpec(inputs=inputs, shapes=shapes, bytes=lambda sample, result: tensor_bytes(*sample.args, result))


def unary_copy_perf(call, shapes="copy"):
    """Perf inputs ``(x,)`` for a copy that makes its result (t_copy, alias_copy, lift_fresh_copy, resolve_neg of a
    negative view): bytes = x read + the result written."""

    def inputs(shape, dtype, device):
        return Sample("perf", (make_tensor(shape, dtype, device),), call=call)

    return PerfSpec(inputs=inputs, shapes=shapes, bytes=lambda sample, result: tensor_bytes(*sample.args, result))


def out_copy_perf(call, shapes="copy"):
    """Perf inputs ``(x, out)`` for a copy into a given out= tensor (conj_physical.out)."""

    def inputs(shape, dtype, device):
        return Sample("perf", (make_tensor(shape, dtype, device), torch.empty(shape, dtype=dtype, device=device)),
                      call=call)

    return PerfSpec(inputs=inputs, shapes=shapes, bytes=lambda sample, result: tensor_bytes(*sample.args))


def view_copy_samples(call, overload, most_dims=None):
    """Samples of a view-copy operator (t_copy, alias_copy, lift_fresh_copy): the view copied contiguous."""

    def samples(dtype, device, quick):
        mk = _maker(dtype, device)
        shape = shape_for(quick)
        one = lambda s: (lambda: (mk(s),))  # noqa: E731
        out_call = lambda x, o: getattr(torch.ops.aten, overload).out(x, out=o)  # noqa: E731
        out_overload = f"{overload}.out"
        cases = [
            Sample("contiguous", one(shape), call=call, expects=overload),
            Sample("noncontiguous-transposed", lambda: (mk(shape[::-1]).t(),), call=call, expects=overload),
            Sample("noncontiguous-strided", lambda: (strided(shape, dtype, device),), call=call, expects=overload),
            Sample("0d", one(()), call=call, expects=overload),
            Sample("1d", one((37,)), call=call, expects=overload),
            Sample("empty", one((0, 5)), call=call, expects=overload),
            Sample("special-values", lambda: (special_values(dtype, device),), call=call, expects=overload),
            Sample("out", lambda: (mk(shape), torch.empty(0, dtype=dtype, device=device)), call=out_call,
                   expects=out_overload),
            Sample("out-noncontiguous", lambda: (mk((shape[1], shape[1])), strided((shape[1],) * 2, dtype, device)),
                   call=out_call, expects=out_overload),
            Sample("out-wrong-dtype", lambda: (mk(shape), torch.empty(0, dtype=_other_dtype(dtype), device=device)),
                   call=out_call),
        ]
        if most_dims is None:
            cases.append(Sample("3d-permuted", lambda: (mk((5, 7, 3)).permute(2, 0, 1),), call=call, expects=overload))
        else:
            cases.append(Sample("3d-error", one((3, 5, 7)), call=call))
        if dtype.is_floating_point:
            cases.append(Sample("grad", lambda: (mk(shape).requires_grad_(),), call=call, expects=overload, grad=True))
        return cases

    return samples


def conj_physical_samples():
    def samples(dtype, device, quick):
        mk = _maker(dtype, device)
        shape = shape_for(quick)

        def out_of(build):
            return lambda: (*build(), torch.empty(0, dtype=dtype, device=device))

        out_call = lambda x, o: torch.conj_physical(x, out=o)  # noqa: E731
        variants = [("contiguous", lambda: (mk(shape),)), ("noncontiguous-transposed", lambda: (mk(shape[::-1]).t(),)),
                    ("noncontiguous-strided", lambda: (strided(shape, dtype, device),)), ("0d", lambda: (mk(()),)),
                    ("empty", lambda: (mk((0, 5)),)), ("special-values", lambda: (special_values(dtype, device),))]
        cases = [Sample(variant, out_of(build), call=out_call, expects="conj_physical.out")
                 for variant, build in variants]
        return cases + [
            Sample("out-wrong-dtype", lambda: (mk(shape), torch.empty(0, dtype=_other_dtype(dtype), device=device)),
                   call=out_call),
            Sample("inplace", lambda: (mk(shape),), call=torch.Tensor.conj_physical_, expects="conj_physical_"),
        ]

    return samples


# --------------------------------------------------------------------------- fill and zero


def fill_samples():
    def samples(dtype, device, quick):
        mk = _maker(dtype, device)
        shape = shape_for(quick)
        aten = torch.ops.aten
        value = 2.5 if dtype.is_floating_point else (True if dtype == torch.bool else 7)
        fill = torch.Tensor.fill_
        layouts = [("contiguous", lambda: mk(shape)), ("noncontiguous-transposed", lambda: mk(shape[::-1]).t()),
                   ("noncontiguous-strided", lambda: strided(shape, dtype, device)), ("0d", lambda: mk(())),
                   ("empty", lambda: mk((0, 5))), ("3d-permuted", lambda: mk((5, 7, 3)).permute(2, 0, 1)),
                   ("column", lambda: mk(shape)[:, 3])]
        cases = [Sample(variant, lambda build=build: (build(), value), call=fill, expects="fill_.Scalar")
                 for variant, build in layouts]
        cases.append(Sample("expanded", lambda: (mk((1, shape[1])), value), call=lambda x, v: x.expand(shape).fill_(v),
                            expects="fill_.Scalar"))  # expanded in the call (see clone_samples)
        values = [("int-value", -3), ("float-value", -1.75), ("bool-value", True)]
        if dtype.is_floating_point:
            values += [("nan", float("nan")), ("inf", float("-inf")), ("negative-zero", -0.0), ("inexact", 0.1)]
        if dtype in (torch.float16, torch.int8, torch.uint8, torch.int16):
            values.append(("overflow-error", 1e5))
        cases += [Sample(variant, lambda v=v: (mk(shape), v), call=fill, expects="fill_.Scalar")
                  for variant, v in values]
        tensor_value = lambda d=dtype: make_tensor((), d, device)  # noqa: E731
        cases += [
            Sample("tensor", lambda: (mk(shape), tensor_value()), call=fill, expects="fill_.Tensor"),
            Sample("tensor-other-dtype", lambda: (mk(shape), tensor_value(_other_dtype(dtype))), call=fill,
                   expects="fill_.Tensor"),
            Sample("tensor-transposed", lambda: (mk(shape[::-1]).t(), tensor_value()), call=fill,
                   expects="fill_.Tensor"),
            Sample("tensor-alias", lambda: (mk(shape),), call=lambda x: x.fill_(x[1, 2]), expects="fill_.Tensor"),
            Sample("tensor-expanded-error", lambda: (mk((1, shape[1])), tensor_value()),
                   call=lambda x, v: x.expand(shape).fill_(v)),
            Sample("tensor-dims-error", lambda: (mk(shape), mk((2,))), call=fill),
            Sample("functional", lambda: (mk(shape[::-1]).t(), value), call=aten.fill.Scalar, expects="fill.Scalar"),
            Sample("functional-tensor", lambda: (mk(shape[::-1]).t(), tensor_value()), call=aten.fill.Tensor,
                   expects="fill.Tensor"),
            Sample("out", lambda: (mk(shape), value, torch.empty(0, dtype=dtype, device=device)),
                   call=lambda x, v, o: aten.fill.Scalar_out(x, v, out=o), expects="fill.Scalar_out"),
            Sample("out-noncontiguous", lambda: (mk(shape), value, strided(shape, dtype, device)),
                   call=lambda x, v, o: aten.fill.Scalar_out(x, v, out=o), expects="fill.Scalar_out"),
            Sample("out-tensor", lambda: (mk(shape), tensor_value(), torch.empty(0, dtype=dtype, device=device)),
                   call=lambda x, v, o: aten.fill.Tensor_out(x, v, out=o), expects="fill.Tensor_out"),
            Sample("out-wrong-dtype", lambda: (mk(shape), value), call=lambda x, v: aten.fill.Scalar_out(
                x, v, out=torch.empty(0, dtype=_other_dtype(dtype), device=x.device))),
        ]
        return cases

    return samples


def zero_samples():
    def samples(dtype, device, quick):
        mk = _maker(dtype, device)
        shape = shape_for(quick)
        aten = torch.ops.aten
        layouts = [("contiguous", lambda: mk(shape)), ("noncontiguous-transposed", lambda: mk(shape[::-1]).t()),
                   ("noncontiguous-strided", lambda: strided(shape, dtype, device)), ("0d", lambda: mk(())),
                   ("empty", lambda: mk((0, 5)))]
        cases = [Sample(variant, lambda build=build: (build(),), call=torch.Tensor.zero_, expects="zero_")
                 for variant, build in layouts]
        return cases + [
            Sample("expanded", lambda: (mk((1, shape[1])),), call=lambda x: x.expand(shape).zero_(), expects="zero_"),
            Sample("functional", lambda: (mk(shape[::-1]).t(),), call=aten.zero, expects="zero"),
            Sample("out", lambda: (mk(shape), torch.empty(0, dtype=dtype, device=device)),
                   call=lambda x, o: aten.zero.out(x, out=o), expects="zero.out"),
            Sample("out-wrong-dtype", lambda: (mk(shape),), call=lambda x: aten.zero.out(
                x, out=torch.empty(0, dtype=_other_dtype(dtype), device=x.device))),
        ]

    return samples


def _in_place_perf(call, shapes):
    """Perf inputs of an in-place writer of one tensor (fill_, zero_): bytes = the tensor written."""

    def inputs(shape, dtype, device):
        return Sample("perf", (torch.empty(shape, dtype=dtype, device=device),), call=call)

    return PerfSpec(inputs=inputs, shapes=shapes, bytes=lambda sample, result: tensor_bytes(result))


def fill_perf(shapes="pointwise"):
    return _in_place_perf(lambda x: x.fill_(1.5), shapes)


def zero_perf(shapes="pointwise"):
    return _in_place_perf(torch.Tensor.zero_, shapes)


# --------------------------------------------------------------------------- creation


def new_factory_samples(method, overload, value_args=()):
    """Samples of ``self.<method>(size, *value_args)``: self's dtype and device, its layout and values ignored."""

    def samples(dtype, device, quick):
        mk = _maker(dtype, device)
        shape = shape_for(quick)

        def made(size, **kwargs):
            return lambda x: getattr(x, method)(size, *value_args, **kwargs)

        out_call = lambda x, o: getattr(torch.ops.aten, overload).out(x, shape, *value_args, out=o)  # noqa: E731
        one = lambda: (mk(shape),)  # noqa: E731
        return [
            Sample("contiguous", one, call=made(shape), expects=overload),
            Sample("noncontiguous-transposed", lambda: (mk(shape[::-1]).t(),), call=made(shape), expects=overload),
            Sample("1d", one, call=made((37,)), expects=overload),
            Sample("0d", one, call=made(()), expects=overload),
            Sample("empty", one, call=made((0, 5)), expects=overload),
            Sample("dtype-kwarg", one, call=made(shape, dtype=_other_dtype(dtype)), expects=overload),
            Sample("out", lambda: (mk(shape), torch.empty(0, dtype=_other_dtype(dtype), device=device)),
                   call=out_call, expects=f"{overload}.out"),
            Sample("negative-size-error", one, call=made((-1, 3))),
        ]

    return samples


def space_calls(fn, overload, dtype, device, quick):
    """make_calls (gems.testing.samples_extra.creation_samples) of linspace or logspace. Integer results take
    bounds whose steps are whole numbers (ATen's CPU kernel steps in double, its CUDA kernel in float)."""
    log = overload == "logspace"
    if dtype.is_floating_point:
        bounds = (-1.0, 2.0) if log else (-2.5, 7.0)
        steps = 37
    else:
        bounds, steps = ((0, 6), 7) if log else (((2, 38), 37) if dtype == torch.uint8 else ((-10, 26), 37))
    base = {"base": 2.0} if log else {}
    start, end = bounds

    def made(*args, **kwargs):
        return lambda like: fn(*args, **base, **kwargs, dtype=like.dtype, device=like.device)

    calls = [("contiguous", made(start, end, steps), overload), ("descending", made(end, start, steps), overload),
             ("one-step", made(start, end, 1), overload), ("two-steps", made(start, end, 2), overload),
             ("no-steps", made(start, end, 0), overload), ("negative-steps-error", made(start, end, -1), None)]
    calls = [(variant, call, expects, ()) for variant, call, expects in calls]
    if not log and dtype == torch.int8:
        calls.append(("overflow-error", made(0, 300, 4), None, ()))
    if dtype.is_floating_point:
        calls.append(("base-e" if log else "fractional", made(0.5, 1.75, 6), overload, ()))
    bound_dtype = torch.float64 if dtype.is_floating_point else torch.int64

    def tensor_bounds(which):  # the 0-d tensors standing for the bounds ``which`` marks
        return tuple(torch.tensor(v, dtype=bound_dtype, device=device) for v, given in zip(bounds, which) if given)

    tensors = (("tensor-bounds", "Tensor_Tensor", (True, True)), ("tensor-start", "Tensor_Scalar", (True, False)),
               ("tensor-end", "Scalar_Tensor", (False, True)))
    for variant, suffix, which in tensors:
        calls.append((variant, lambda like, *b, w=which: fn(*_bounds(b, w, start, end), steps, **base,
                                                             dtype=like.dtype, device=like.device),
                      f"{overload}.{suffix}", lambda w=which: tensor_bounds(w)))
        calls.append((f"{variant}-out", lambda like, *b, w=which: fn(*_bounds(b[:-1], w, start, end), steps, **base,
                                                                    out=b[-1]),
                      f"{overload}.{suffix}_out",
                      lambda w=which: (*tensor_bounds(w), torch.empty(0, dtype=dtype, device=device))))
    calls.append(("tensor-bounds-error", lambda like, b: fn(b, end, steps, **base, dtype=like.dtype), None,
                  lambda: (torch.zeros(2, device=device),)))
    outs = (("out", lambda: torch.empty(0, dtype=dtype, device=device)),
            ("out-noncontiguous", lambda: torch.empty(2 * steps, dtype=dtype, device=device)[::2]))
    for variant, out in outs:
        calls.append((variant, lambda like, o: fn(start, end, steps, **base, out=o), f"{overload}.out",
                      lambda out=out: (out(),)))
    if dtype == torch.float32:  # dtype=None: the default dtype
        calls.append(("default-dtype", lambda like: fn(0, 5, 11, **base, device=like.device), overload, ()))
    return calls


def _bounds(tensors, which, start, end):
    """(start, end) with the sample's 0-d tensors where ``which`` says a bound is a tensor."""
    given = iter(tensors)
    return [next(given) if is_tensor else value for value, is_tensor in zip((start, end), which)]


def one_hot_samples():
    def samples(dtype, device, quick):
        shape = shape_for(quick)
        labels = lambda s, high=4: make_tensor(s, torch.int64, device, int_low=0, int_high=high)  # noqa: E731
        one_hot = torch.nn.functional.one_hot
        return [
            Sample("contiguous", lambda: (labels(shape), 5)),
            Sample("infer-classes", lambda: (labels(shape),)),
            Sample("1d", lambda: (labels((37,), high=9), 10)),
            Sample("0d", lambda: (labels(()), 6)),
            Sample("noncontiguous-transposed", lambda: (labels(shape[::-1]).t(), 5)),
            Sample("empty", lambda: (labels((0, 3)), 4)),
            Sample("empty-infer-error", lambda: (labels((0, 3)),)),
            Sample("int32-error", lambda: (labels(shape).int(), 5)),
            Sample("negative-class-error", lambda: (labels(shape) - 2, 5), call=one_hot),
            Sample("class-too-large-error", lambda: (labels(shape), 3), call=one_hot),
        ]

    return samples


def one_hot_perf(shapes="pointwise"):
    """one_hot of numel/16 labels into 16 classes: a result of the shape's element count."""

    def inputs(shape, dtype, device):
        rows = max(1, shape[0] // 16)
        return Sample("perf", (make_tensor((rows,), torch.int64, device, int_low=0, int_high=15), 16))

    return PerfSpec(inputs=inputs, shapes=shapes, bytes=lambda sample, result: tensor_bytes(sample.args[0], result))


def polar_samples():
    def samples(dtype, device, quick):
        mk = _maker(dtype, device)
        shape = shape_for(quick)
        from gems.ops.creation.polar import real_view  # conformance compares real tensors

        call = lambda a, t: real_view(torch.polar(a, t))  # noqa: E731
        out_call = lambda a, t, o: real_view(torch.polar(a, t, out=o))  # noqa: E731
        complex_of = torch.complex64 if dtype == torch.float32 else torch.complex128
        magnitude = lambda s: mk(s, low=0.0, high=3.0)  # noqa: E731

        def specials():
            values = special_values(dtype, device)
            return values.repeat_interleave(len(values)).abs(), values.repeat(len(values))

        cases = [
            Sample("contiguous", lambda: (magnitude(shape), mk(shape)), call=call),
            Sample("noncontiguous-transposed", lambda: (magnitude(shape[::-1]).t(), mk(shape)), call=call),
            Sample("broadcast", lambda: (magnitude((shape[0], 1)), mk((shape[1],))), call=call),
            Sample("0d", lambda: (magnitude(()), mk(())), call=call),
            Sample("empty", lambda: (magnitude((0, 5)), mk((0, 5))), call=call),
            Sample("special-values", specials, call=call),
            Sample("out", lambda: (magnitude(shape), mk(shape), torch.empty(0, dtype=complex_of, device=device)),
                   call=out_call, expects="polar.out"),
            Sample("broadcast-error", lambda: (magnitude((3,)), mk((4,))), call=call),
            Sample("out-wrong-dtype", lambda: (magnitude(shape), mk(shape), torch.empty(0, dtype=dtype, device=device)),
                   call=out_call),
        ]
        if dtype == torch.float32:
            cases += [Sample("int-input-error", lambda: (mk(shape, torch.int32), mk(shape, torch.int32)), call=call),
                      Sample("mixed-dtype-error", lambda: (magnitude(shape), mk(shape, torch.float64)), call=call)]
        return cases

    return samples


def polar_perf(shapes="pointwise"):
    def inputs(shape, dtype, device):
        return Sample("perf", (make_tensor(shape, dtype, device, low=0.0), make_tensor(shape, dtype, device)))

    return PerfSpec(inputs=inputs, shapes=shapes, bytes=lambda sample, result: tensor_bytes(*sample.args, result))
