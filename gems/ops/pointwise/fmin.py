"""fmin (out=): the smaller of x and y, ignoring NaN unless both are NaN (minimum propagates it);
integers and bool as minimum. Two zeros: -0.0 where the device's ATen orders them (CUDA's fminf),
else the one ATen's CPU kernels return
(the first operand; the second in bf16)."""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import ALL
from gems.ops.pointwise.shared import ORDERED_ZEROS, binary_samples, combined, edge_samples, out_of, pointwise_perf
from gems.spec import OpSpec


@triton.jit
def _fmin(x, y, COMMON: tl.constexpr):
    if x.dtype == tl.int1:
        r = x & y
    else:
        if ORDERED_ZEROS or COMMON != tl.bfloat16:
            r = tl.where((x <= y) | (y != y), x, y)  # y NaN: x (NaN too only if both are)
        else:
            r = tl.where((x < y) | (y != y), x, y)  # ATen's CPU bf16 kernel: y of two equal zeros
        if ORDERED_ZEROS and x.dtype.is_floating():
            # +0.0 only if both are (negated by * -1: Triton's unary minus is 0 - x, which loses -0.0)
            r = tl.where((x == 0) & (y == 0), (x * -1 + y * -1) * -1, r)
    return r


fmin_op = PointwiseOp("fmin", _fmin, operands=2, common_arg=True)

SPECS = [
    OpSpec(
        name="fmin", family="pointwise",
        impls={"fmin": fmin_op, "fmin.out": out_of(fmin_op)},
        call=torch.fmin,
        samples=combined(binary_samples(torch.fmin, out="fmin.out", grad=True, scalar=None, float_scalar=False),
                         edge_samples("integer_extreme_samples", torch.fmin, operands=2, expects="fmin")),
        dtypes=ALL, perf=pointwise_perf(2),
    ),
]
