"""mish_backward(grad, x): grad (t + x s (1 - t^2)) with t = tanh(softplus(x)) and s = sigmoid(x)
(ATen's CUDA formula; a correctly rounded division in the sigmoid for fp32 and fp64 results, Triton's
approximate fp32 one for fp16/bf16: shared.div_for_storage). No ``.out`` overload exists.
"""

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS
from gems.ops.pointwise.mish import tanh_softplus
from gems.ops.pointwise.shared import backward_samples, div_for_storage, pointwise_perf
from gems.spec import OpSpec


@triton.jit
def _mish_backward(grad, x, COMMON: tl.constexpr):
    sigmoid = div_for_storage(1.0, 1.0 + libdevice.exp(x * -1.0), COMMON)
    t = tanh_softplus(x)
    return grad * (t + x * sigmoid * (1.0 - t * t))


mish_backward_op = PointwiseOp("mish_backward", _mish_backward, operands=2, dtypes=FLOATS, common_arg=True)

SPECS = [
    OpSpec(
        name="mish_backward", family="pointwise", impls={"mish_backward": mish_backward_op},
        call=torch.ops.aten.mish_backward.default,
        samples=backward_samples(domain=dict(low=-10.0, high=10.0), rejects=(torch.int64,)),
        dtypes=FLOATS, perf=pointwise_perf(2),
    ),
]
