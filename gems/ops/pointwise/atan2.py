"""atan2 (in-place, out=): the angle of the point (y=self, x=other), libdevice's atan2 in fp32 for
fp16/bf16. Integers and bool are computed and returned as the default float dtype. ``arctan2`` is a
CompositeImplicitAutograd alias that ATen decomposes to atan2 before the backend key: gems serves it
through atan2's overloads (see the samples)."""

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp, Promotion
from gems.dtypes import ALL
from gems.ops.pointwise.shared import binary_samples, inplace_of, out_of, pointwise_perf
from gems.spec import OpSpec

FP32_SMALLEST_NORMAL = tl.constexpr(1.1754943508222875e-38)
# 2^64: scales a pair of fp32 subnormals to normal numbers, exactly.
SUBNORMAL_SCALE = tl.constexpr(18446744073709551616.0)


@triton.jit
def _atan2(x, y):
    # atan2 depends only on the ratio: a pair of tiny operands is scaled up first, because Triton links
    # libdevice with FTZ on NVIDIA GPUs and its fp32 atan2 would see two zeros
    if x.dtype == tl.float32:
        tiny = tl.maximum(tl.abs(x), tl.abs(y)) < FP32_SMALLEST_NORMAL
        x = tl.where(tiny, x * SUBNORMAL_SCALE, x)
        y = tl.where(tiny, y * SUBNORMAL_SCALE, y)
    return libdevice.atan2(x, y)


atan2_op = PointwiseOp("atan2", _atan2, operands=2, promotion=Promotion.INT_TO_FLOAT)


def _samples(dtype, device, quick):
    from gems.testing.samples_extra import alias_samples, two_tensors

    wide = lambda x: torch.empty(0, dtype=torch.float64, device=x.device)
    return alias_samples(binary_samples(torch.atan2, out="atan2.out", inplace=("atan2_", torch.Tensor.atan2_),
                                        grad=True, scalar=None, float_scalar=False, result="float"), [
        ("arctan2", torch.arctan2, "atan2", two_tensors()),
        ("arctan2-inplace", lambda x, y: x.double().arctan2_(y), "atan2_", two_tensors()),
        ("arctan2-out", lambda x, y: torch.arctan2(x, y, out=wide(x)), "atan2.out", two_tensors()),
    ])(dtype, device, quick)


SPECS = [
    OpSpec(
        name="atan2", family="pointwise",
        impls={"atan2": atan2_op, "atan2_": inplace_of(atan2_op), "atan2.out": out_of(atan2_op)},
        call=torch.atan2, samples=_samples, dtypes=ALL, perf=pointwise_perf(2),
    ),
]
