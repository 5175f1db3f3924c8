"""fmax (out=): the larger of x and y, ignoring NaN unless both are NaN (maximum propagates it);
integers and bool as maximum. Two zeros: +0.0 where the device's ATen orders them (CUDA's fmaxf),
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
def _fmax(x, y, COMMON: tl.constexpr):
    if x.dtype == tl.int1:
        r = x | y
    else:
        if ORDERED_ZEROS or COMMON != tl.bfloat16:
            r = tl.where((x >= y) | (y != y), x, y)  # y NaN: x (NaN too only if both are)
        else:
            r = tl.where((x > y) | (y != y), x, y)  # ATen's CPU bf16 kernel: y of two equal zeros
        if ORDERED_ZEROS and x.dtype.is_floating():
            r = tl.where((x == 0) & (y == 0), x + y, r)  # -0.0 only if both are
    return r


fmax_op = PointwiseOp("fmax", _fmax, operands=2, common_arg=True)

SPECS = [
    OpSpec(
        name="fmax", family="pointwise",
        impls={"fmax": fmax_op, "fmax.out": out_of(fmax_op)},
        call=torch.fmax,
        samples=combined(binary_samples(torch.fmax, out="fmax.out", grad=True, scalar=None, float_scalar=False),
                         edge_samples("integer_extreme_samples", torch.fmax, operands=2, expects="fmax")),
        dtypes=ALL, perf=pointwise_perf(2),
    ),
]
