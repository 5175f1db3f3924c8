"""prod: ``prod``, ``prod.dim_int`` and their ``out=`` forms, by the shared reduction kernel
(gems/ops/reduction/combine.py): each element converted to the result dtype, multiplied in fp32 (fp16,
bf16, fp32), fp64 or int64 (integers and bool give int64 and wrap like ATen's); an empty product is 1."""

from __future__ import annotations

import torch

from gems.checks import check_out
from gems.dtypes import ALL
from gems.ops.reduction.combine import PROD, Kind, reduce
from gems.ops.reduction.planning import TL_DTYPES, reduction_perf
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, lazy

_PROD = Kind(PROD)


def _prod(x, dim, keepdim, dtype, out):
    if dtype is not None and out is not None and out.dtype != dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {dtype}, but got {out.dtype} instead")
    result = dtype or (out.dtype if out is not None else x.dtype if x.dtype.is_floating_point else torch.int64)
    if x.dtype not in TL_DTYPES or result not in TL_DTYPES:
        raise Fallback(f"prod of {x.dtype} to {result} is not handled by gems")
    (y,) = reduce(x, dim, keepdim, _PROD, result, outs=None if out is None else [out])
    return y


def prod(self, *, dtype=None):
    return _prod(self, None, False, dtype, None)


def prod_dim(self, dim, keepdim=False, *, dtype=None):
    return _prod(self, dim, keepdim, dtype, None)


def prod_int_out(self, dim, keepdim=False, *, dtype=None, out):
    return _prod(self, dim, keepdim, dtype, out)


def prod_out(self, *, dtype=None, out):
    # ATen's prod.out is generated from prod: its out= has exactly prod's result dtype (prod.int_out takes
    # out's dtype as the result's instead).
    check_out(out, self, dtype or (self.dtype if self.dtype.is_floating_point else torch.int64))
    return _prod(self, None, False, dtype, out)


def _result_dtype(dtype):
    return dtype if dtype.is_floating_point else torch.int64


def near_one(shape, dtype, device):
    """Values whose products stay finite over long rows: +-[0.75, 1.25] for floats, [-2, 2] for integers
    (whose int64 products wrap: the special values check that)."""
    from gems.testing.samples import make_tensor

    x = make_tensor(shape, dtype, device, int_low=-2, int_high=2)
    if not dtype.is_floating_point or str(device) == "meta":
        return x
    return (torch.sign(x) * (1 + x / 16)).to(dtype)


SPECS = [
    OpSpec(
        name="prod", family="reduction",
        impls={"prod": prod, "prod.dim_int": prod_dim, "prod.int_out": prod_int_out, "prod.out": prod_out},
        call=torch.prod,
        samples=lazy("gems.testing.samples_reduction", "reduction_samples", torch.prod, full="prod",
                     dim="prod.dim_int", out="prod.int_out", full_out=("prod.out", torch.ops.aten.prod.out),
                     result_dtype=_result_dtype, dtype_arg=True, single_dim=True, none_dim=False, values=near_one),
        dtypes=ALL,
        tolerance="reduction",
        perf=reduction_perf(),
    ),
]
