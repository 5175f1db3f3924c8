"""logaddexp2 (out=): log2(2^x + 2^y) without overflow: fma(log1p(2^-|x - y|), 1 / ln 2, max(x, y)), in fp32
for fp16/bf16; two equal infinities give themselves (their difference is NaN), NaN propagates. Floating
dtypes only: ATen refuses integer and bool inputs (NotImplementedError)."""

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS
from gems.ops.pointwise.shared import binary_samples, combined, out_of, pointwise_perf
from gems.spec import OpSpec, lazy

# 1 / ln(2), rounded to the compute dtype as ATen rounds it (static_cast<opmath_t>(1.0 / ln_2)).
LOG2E = tl.constexpr(1.4426950408889634)
INF = tl.constexpr(float("inf"))


@triton.jit
def _logaddexp2(x, y):
    # -|x - y| <= 0, so the exponential stays in (0, 1]; a NaN operand makes it NaN (max ignores NaN)
    # ATen's m + log1p(...) * inv_log_2 is contracted to one fma by nvcc (and by ATen's vectorized CPU code)
    r = tl.fma(libdevice.log1p(tl.exp2(0 - tl.abs(x - y))), LOG2E, tl.maximum(x, y))
    return tl.where((x == y) & (tl.abs(x) == INF), x, r)


logaddexp2_op = PointwiseOp("logaddexp2", _logaddexp2, operands=2, dtypes=FLOATS)

SPECS = [
    OpSpec(
        name="logaddexp2", family="pointwise",
        impls={"logaddexp2": logaddexp2_op, "logaddexp2.out": out_of(logaddexp2_op)},
        call=torch.logaddexp2,
        samples=combined(binary_samples(torch.logaddexp2, out="logaddexp2.out", grad=True, scalar=None,
                                        float_scalar=False),
                         lazy("gems.testing.samples_pwbinary", "integer_input_error_samples", torch.logaddexp2)),
        dtypes=FLOATS, perf=pointwise_perf(2),
    ),
]
