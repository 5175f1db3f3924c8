"""angle of a real tensor: pi where x < 0, 0 elsewhere, NaN kept (ATen's real angle). Integer and bool
inputs give the default float dtype (Promotion.INT_TO_FLOAT); complex tensors fall back to ATen.
fp16/bf16: pi computed in fp32 and rounded once to the dtype, as ATen rounds M_PI.
"""

from dataclasses import replace

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import PointwiseOp, Promotion
from gems.ops.pointwise.unary_shared import unary_spec

PI = tl.constexpr(3.141592653589793)


@triton.jit
def _angle(x):
    pi = tl.full(x.shape, PI, x.dtype)  # a bare PI beside 0.0 would be an fp32 constant, for fp64 too
    return tl.where(x != x, x, tl.where(x < 0, pi, 0.0))


angle_op = PointwiseOp("angle", _angle, operands=1, promotion=Promotion.INT_TO_FLOAT)

SPECS = [replace(unary_spec(angle_op, torch.angle, inplace=False), known_failures={
    ("nvidia", dtype, "*"): "gems computes angle in this dtype; ATen's CUDA kernel raises NotImplementedError "
                            "(its CPU kernel computes it)" for dtype in ("float16", "bfloat16")})]
