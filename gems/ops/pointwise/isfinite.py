"""isfinite: |x| < inf, false for NaN (always true for integers and bool), bool result."""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import PointwiseOp, Promotion
from gems.dtypes import ALL
from gems.ops.pointwise.shared import pointwise_perf, unary_samples
from gems.spec import OpSpec

INF = tl.constexpr(float("inf"))


@triton.jit
def _isfinite(x):
    if x.dtype.is_floating():
        result = tl.abs(x) < INF  # false for NaN too
    else:
        result = x == x
    return result  # one return after the static if/else (see shared.div_rn)


isfinite_op = PointwiseOp("isfinite", _isfinite, operands=1, promotion=Promotion.BOOL)


SPECS = [
    OpSpec(
        name="isfinite", family="pointwise", impls={"isfinite": isfinite_op}, call=torch.isfinite,
        samples=unary_samples(), dtypes=ALL, tolerance="exact", perf=pointwise_perf(1),
        # CompositeImplicitAutograd in ATen (three kernels); one gems kernel, above the decomposition. A bool
        # result has no gradient, so no backward is needed.
        autograd_enabled=("isfinite",),
    ),
]
