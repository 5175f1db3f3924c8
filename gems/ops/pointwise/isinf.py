"""isinf: |x| == inf (never for integers and bool), bool result."""

import torch
import triton
import triton.language as tl

from gems.checks import check_out
from gems.codegen.pointwise import PointwiseOp, Promotion
from gems.dtypes import ALL
from gems.ops.pointwise.shared import pointwise_perf, unary_samples
from gems.spec import OpSpec

INF = tl.constexpr(float("inf"))


@triton.jit
def _isinf(x):
    if x.dtype.is_floating():
        result = tl.abs(x) == INF
    else:
        result = x != x  # integers and bool are never infinite
    return result  # one return after the static if/else (see shared.div_rn)


isinf_op = PointwiseOp("isinf", _isinf, operands=1, promotion=Promotion.BOOL)


def isinf_out(self, *, out):
    check_out(out, self, torch.bool)  # ATen's isinf.out is generated from isinf: exactly its bool result
    return isinf_op(self, out=out)


def _bool_out(x):
    """torch.isinf has no ``out=``; its overload does."""
    return torch.ops.aten.isinf.out(x, out=torch.empty(0, dtype=torch.bool, device=x.device))


SPECS = [
    OpSpec(
        name="isinf", family="pointwise", impls={"isinf": isinf_op, "isinf.out": isinf_out}, call=torch.isinf,
        samples=unary_samples(out=("isinf.out", _bool_out)), dtypes=ALL, tolerance="exact", perf=pointwise_perf(1),
    ),
]
