"""sum: full and per-dimension sums (``sum``, ``sum.dim_IntList`` and their ``out=`` forms), by the shared
reduction kernel (gems/ops/reduction/combine.py: one pass, split between programs when the outputs are
too few to fill the device).

Numerics follow ATen: each element is first converted to the result dtype (``dtype=`` or ``out``),
then accumulated in fp32 (fp16, bf16, fp32), fp64, or int64 (integers and bool: results wrap like
ATen's); integer and bool inputs give int64 unless a dtype is asked for.
"""

from __future__ import annotations

import torch

from gems.checks import check_out
from gems.dtypes import ALL
from gems.ops.reduction.combine import SUM, Kind, reduce
from gems.ops.reduction.planning import TL_DTYPES, reduction_perf
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, lazy

_SUM = Kind(SUM)


def _sum(x: torch.Tensor, dim, keepdim: bool, dtype, out):
    """Check the arguments as ATen does and reduce."""
    if x.dtype not in TL_DTYPES:
        raise Fallback(f"sum of {x.dtype} is not handled by gems")
    if dtype is not None and out is not None and out.dtype != dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {dtype}, but got {out.dtype} instead")
    result_dtype = dtype or (out.dtype if out is not None else
                             x.dtype if x.dtype.is_floating_point else torch.int64)
    if result_dtype not in TL_DTYPES:
        raise Fallback(f"sum to {result_dtype} is not handled by gems")
    (y,) = reduce(x, dim, keepdim, _SUM, result_dtype, outs=None if out is None else [out])
    return y


# --------------------------------------------------------------------------- ATen overloads


def sum_all(self, *, dtype=None):
    return _sum(self, None, False, dtype, None)


def sum_dim(self, dim, keepdim=False, *, dtype=None):
    return _sum(self, dim, keepdim, dtype, None)


def sum_all_out(self, *, dtype=None, out):
    # ATen's sum.out is generated from sum: its out= has exactly sum's result dtype (sum.IntList_out takes
    # out's dtype as the result's instead).
    check_out(out, self, dtype or (self.dtype if self.dtype.is_floating_point else torch.int64))
    return _sum(self, None, False, dtype, out)


def sum_dim_out(self, dim, keepdim=False, *, dtype=None, out):
    return _sum(self, dim, keepdim, dtype, out)


def _sum_result_dtype(dtype: torch.dtype) -> torch.dtype:
    return dtype if dtype.is_floating_point else torch.int64


SPECS = [
    OpSpec(
        name="sum", family="reduction",
        impls={"sum": sum_all, "sum.dim_IntList": sum_dim, "sum.out": sum_all_out, "sum.IntList_out": sum_dim_out},
        call=torch.sum,
        samples=lazy("gems.testing.samples_reduction", "reduction_samples", torch.sum, full="sum",
                     dim="sum.dim_IntList", out="sum.IntList_out", full_out=("sum.out", torch.ops.aten.sum.out),
                     result_dtype=_sum_result_dtype, dtype_arg=True, grad=True),
        dtypes=ALL,
        tolerance="reduction",
        perf=reduction_perf(),
    ),
]
