"""isnan: x != x (false for every integer and bool), bool result."""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)

from gems.checks import check_out
from gems.codegen.pointwise import PointwiseOp, Promotion
from gems.dtypes import ALL
from gems.ops.pointwise.shared import pointwise_perf, unary_samples
from gems.spec import OpSpec


@triton.jit
def _isnan(x):
    return x != x  # false for every integer and bool


isnan_op = PointwiseOp("isnan", _isnan, operands=1, promotion=Promotion.BOOL)


def isnan_out(self, *, out):
    check_out(out, self, torch.bool)  # ATen's isnan.out is generated from isnan: exactly its bool result
    return isnan_op(self, out=out)


def _bool_out(x):
    """torch.isnan has no ``out=``; its overload does."""
    return torch.ops.aten.isnan.out(x, out=torch.empty(0, dtype=torch.bool, device=x.device))


SPECS = [
    OpSpec(
        name="isnan", family="pointwise", impls={"isnan": isnan_op, "isnan.out": isnan_out}, call=torch.isnan,
        samples=unary_samples(out=("isnan.out", _bool_out)), dtypes=ALL, tolerance="exact", perf=pointwise_perf(1),
    ),
]
