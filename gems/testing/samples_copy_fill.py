"""Samples and perf inputs of fill_ and zero_, with their functional and out= forms (gems/ops/copy)."""

from __future__ import annotations

import torch

from gems.spec import PerfSpec, Sample
from gems.testing.perf_inputs import tensor_bytes
from gems.testing.samples import make_tensor, shape_for, strided
from gems.testing.samples_copy_common import maker, other_dtype

# --------------------------------------------------------------------------- fill and zero


def fill_samples():
    def samples(dtype, device, quick):
        mk = maker(dtype, device)
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
            Sample("tensor-other-dtype", lambda: (mk(shape), tensor_value(other_dtype(dtype))), call=fill,
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
                x, v, out=torch.empty(0, dtype=other_dtype(dtype), device=x.device))),
        ]
        return cases

    return samples


def zero_samples():
    def samples(dtype, device, quick):
        mk = maker(dtype, device)
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
                x, out=torch.empty(0, dtype=other_dtype(dtype), device=x.device))),
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
