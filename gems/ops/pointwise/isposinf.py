"""isposinf: whether x is inf (bool); false for every integer and bool (ATen fills false for them)."""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)

from gems.codegen.pointwise import PointwiseOp, Promotion
from gems.ops.pointwise.unary_shared import bool_out_overload, unary_spec

INF = tl.constexpr(float("inf"))


@triton.jit
def _isposinf(x):
    if x.dtype.is_floating():
        r = x == INF
    else:
        r = x != x  # integers are never infinite
    return r


isposinf_op = PointwiseOp("isposinf", _isposinf, operands=1, promotion=Promotion.BOOL)

SPECS = [unary_spec(isposinf_op, torch.isposinf, inplace=False, grad=False, impls=bool_out_overload(isposinf_op))]
