"""full (and full.out): ``size`` filled with ``fill_value``, checked as ATen's Scalar::to checks it;
dtype=None infers it from the value (bool, int64, else the default float dtype)."""

import torch

from gems.checks import checked_scalar
from gems.dtypes import ALL
from gems.ops.creation.fill import check_options, factory_samples, fill_dense, infer_dtype, sized_factory_perf
from gems.spec import OpSpec


def full(size, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None):
    dtype = infer_dtype(fill_value) if dtype is None else dtype
    check_options(dtype, layout, device, pin_memory)
    value = checked_scalar(fill_value, dtype)
    return fill_dense(torch.empty(size, dtype=dtype, device=device), value)


def full_out(size, fill_value, *, out):
    value = checked_scalar(fill_value, out.dtype)
    out.resize_(size)
    return fill_dense(out, value)


def _full_calls(dtype, device, quick):
    from gems.testing.samples import shape_for
    from gems.testing.samples_extra import factory_calls

    shape = shape_for(quick)
    calls = factory_calls(torch.full, "full", (2.5 if dtype.is_floating_point else 3,))(dtype, device, quick)
    big = {torch.float16: 1e6, torch.bfloat16: 1e39, torch.float32: 1e39, torch.int8: 300, torch.int16: 70000,
           torch.int32: 2**40, torch.uint8: 256}.get(dtype)
    values = [("nan", float("nan")), ("negative-zero", -0.0), ("inf", float("-inf")), ("int-value", 7),
              ("float-value", -2.75), ("inexact-value", 0.1), ("negative-int", -1)]
    if big is not None:
        values.append(("overflow", big))
    for variant, value in values:
        calls.append((variant, lambda like, v=value: torch.full(shape, v, dtype=like.dtype, device=like.device),
                      "full", ()))
    if dtype == torch.float32:  # dtype=None: inferred from the value, as ATen does
        for variant, value in (("infer-int", 3), ("infer-float", 3.5), ("infer-bool", True)):
            calls.append((variant, lambda like, v=value: torch.full(shape, v, device=like.device), "full", ()))
    return calls


SPECS = [
    OpSpec(
        name="full", family="creation", impls={"full": full, "full.out": full_out}, call=torch.full,
        samples=factory_samples(_full_calls), dtypes=ALL, tolerance="exact", perf=sized_factory_perf(torch.full, 1.5),
    ),
]
