"""logaddexp (out=): log(exp(x) + exp(y)) without overflow: max(x, y) + log1p(exp(-|x - y|)), in fp32
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

INF = tl.constexpr(float("inf"))


@triton.jit
def _logaddexp(x, y):
    # -|x - y| <= 0, so the exponential stays in (0, 1]; a NaN operand makes it NaN (max ignores NaN)
    r = tl.maximum(x, y) + libdevice.log1p(tl.exp(0 - tl.abs(x - y)))
    return tl.where((x == y) & (tl.abs(x) == INF), x, r)


logaddexp_op = PointwiseOp("logaddexp", _logaddexp, operands=2, dtypes=FLOATS)

SPECS = [
    OpSpec(
        name="logaddexp", family="pointwise",
        impls={"logaddexp": logaddexp_op, "logaddexp.out": out_of(logaddexp_op)},
        call=torch.logaddexp,
        samples=combined(binary_samples(torch.logaddexp, out="logaddexp.out", grad=True, scalar=None,
                                        float_scalar=False),
                         lazy("gems.testing.samples_pwbinary", "integer_input_error_samples", torch.logaddexp)),
        dtypes=FLOATS, perf=pointwise_perf(2),
    ),
]
