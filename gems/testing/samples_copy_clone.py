"""Samples and perf inputs of clone, resolve_neg, the view copies (t_copy, alias_copy, lift_fresh_copy) and
conj_physical (gems/ops/copy)."""

from __future__ import annotations

import torch

from gems.spec import PerfSpec, Sample
from gems.testing.perf_inputs import tensor_bytes
from gems.testing.samples import make_tensor, shape_for, special_values, strided
from gems.testing.samples_copy_common import CHANNELS_LAST, NCHW, maker, other_dtype

# --------------------------------------------------------------------------- clone and the view copies


def clone_samples():
    def samples(dtype, device, quick):
        mk = maker(dtype, device)
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
            Sample("channels-last-preserved", lambda: (mk(NCHW).contiguous(memory_format=CHANNELS_LAST),)),
            Sample("contiguous-format", transposed, {"memory_format": torch.contiguous_format}),
            Sample("channels-last", one(NCHW), {"memory_format": CHANNELS_LAST}),
            Sample("contiguous-method", transposed, call=lambda x: x.contiguous()),
            Sample("channels-last-rank-error", one(shape), {"memory_format": CHANNELS_LAST}),
            Sample("out", lambda: (mk(shape), torch.empty(0, dtype=dtype, device=device)),
                   call=lambda x, o: aten.clone.out(x, out=o), expects="clone.out"),
            Sample("out-self", one(shape), call=lambda x: aten.clone.out(x, out=x), expects="clone.out"),
            Sample("out-wrong-dtype", lambda: (mk(shape), torch.empty(0, dtype=other_dtype(dtype), device=device)),
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
        mk = maker(dtype, device)
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
        mk = maker(dtype, device)
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
            Sample("out-wrong-dtype", lambda: (mk(shape), torch.empty(0, dtype=other_dtype(dtype), device=device)),
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
        mk = maker(dtype, device)
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
            Sample("out-wrong-dtype", lambda: (mk(shape), torch.empty(0, dtype=other_dtype(dtype), device=device)),
                   call=out_call),
            Sample("inplace", lambda: (mk(shape),), call=torch.Tensor.conj_physical_, expects="conj_physical_"),
        ]

    return samples
