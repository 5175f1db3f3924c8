"""Samples of the one-operand pointwise operators: :func:`gems.testing.samples.unary_samples` plus the
out= and in-place error variants."""

from __future__ import annotations

import torch

from gems.spec import Sample
from gems.testing.samples import make_tensor, shape_for, unary_samples
from gems.testing.samples_extra_common import WIDER, other_device, refused_out_dtype, strided_empty

# --------------------------------------------------------------------------- unary operators


def unary_op_samples(call, *, out=None, inplace=None, exact_out=False, domain=None):
    """:func:`unary_samples` plus out= and in-place error variants of a one-operand operator.

    exact_out: ATen requires out= of exactly the result dtype ("Found dtype ... but expected ...").
    """
    base = unary_samples(out=out, inplace=inplace, domain=domain)
    domain = domain or {}

    def samples(dtype, device, quick):
        cases = base(dtype, device, quick)
        shape = shape_for(quick)
        one = lambda s: lambda: (make_tensor(s, dtype, device, **domain),)
        if out:
            other = WIDER.get(dtype) if exact_out else refused_out_dtype(dtype)
            cases += [
                Sample("out-noncontiguous", lambda: (make_tensor(shape, dtype, device, **domain),
                                                     strided_empty(shape, dtype, device)),
                       expects=out, call=lambda x, o: call(x, out=o)),
                Sample("out-wrong-device", one(shape),
                       call=lambda x: call(x, out=torch.empty(0, dtype=x.dtype, device=other_device(x.device)))),
                Sample("out-overlap-error", one((shape[1], shape[1])), call=lambda x: call(x, out=x.t())),
            ]
            if other is not None:
                cases.append(Sample("out-wrong-dtype", one(shape), expects=out,  # logical_not writes any dtype
                                    call=lambda x: call(x, out=torch.empty(0, dtype=other, device=x.device))))
        if inplace:
            overload, inplace_call = inplace
            cases.append(Sample("inplace-expanded-error", one((1, shape[1])),
                                call=lambda x: inplace_call(x.expand(3, shape[1]))))
        return cases

    return samples
