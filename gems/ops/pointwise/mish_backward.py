"""mish_backward(grad, x): grad (t + x s (1 - t^2)) with t = tanh(softplus(x)) and s = sigmoid(x)
(ATen's CUDA formula, with a correctly rounded division in the sigmoid, for fp32 and fp64 results; for fp16/bf16
the same slope through one exp and one approximate division: mish.mish_terms). No ``.out`` overload exists.
"""

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS
from gems.ops.pointwise.mish import mish_terms, tanh_softplus
from gems.ops.pointwise.shared import backward_samples, div_for_storage, pointwise_perf
from gems.spec import OpSpec


@triton.jit
def _mish_backward(grad, x, COMMON: tl.constexpr):
    if (COMMON == tl.float16) or (COMMON == tl.bfloat16):
        # With e = exp(x), n = e (e + 2), d = n + 2: t = n / d, s = e / (1 + e), 1 - t^2 = 4 (1 + e)^2 / d^2, so
        # the slope is (n d + 4 x e (1 + e)) / d^2: one exp and one approximate division. Past x = 20 it is
        # 1 + x * 0, as ATen's t + x s (1 - t^2) with t = 1 there: NaN for x = inf.
        e, n = mish_terms(x)
        d = n + 2.0
        slope = tl.where(x > 20.0, 1.0 + x * 0.0, (n * d + 4.0 * x * e * (1.0 + e)) / (d * d))
        r = grad * slope
    else:
        sigmoid = div_for_storage(1.0, 1.0 + libdevice.exp(x * -1.0), COMMON)
        t = tanh_softplus(x)
        r = grad * (t + x * sigmoid * (1.0 - t * t))
    return r


mish_backward_op = PointwiseOp("mish_backward", _mish_backward, operands=2, dtypes=FLOATS, common_arg=True)

SPECS = [
    OpSpec(
        name="mish_backward", family="pointwise", impls={"mish_backward": mish_backward_op},
        call=torch.ops.aten.mish_backward.default,
        samples=backward_samples(domain=dict(low=-10.0, high=10.0), rejects=(torch.int64,)),
        dtypes=FLOATS, perf=pointwise_perf(2),
    ),
]
