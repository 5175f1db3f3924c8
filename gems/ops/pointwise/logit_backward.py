"""logit_backward(grad, x, eps=None): grad / (x (1 - x)), ATen's CUDA formula. Without eps, NaN for x
outside [0, 1] (and +-inf at 0 and 1); with eps, 0 for x outside [eps, 1 - eps]. Floating dtypes; eps in
fp32 for fp16/bf16/fp32 and fp64 for fp64, as ATen's accumulate type.

x = -0.0 is left out of the special-value and subnormal samples: ATen's CPU kernel answers grad * inf there
in its scalar tail and, like CUDA's (and gems), grad / -0.0 in its vectorized fp64 loop.
"""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS
from gems.ops.pointwise.logit import DOMAIN, NO_EPS
from gems.ops.pointwise.shared import backward_samples, combined, div_rn, pointwise_perf
from gems.ops.pointwise.unary_shared import without_values
from gems.spec import OpSpec

INF = tl.constexpr(float("inf"))


@triton.jit
def _logit_backward(grad, x, eps):
    derivative = div_rn(grad, x * (1.0 - x))
    no_eps = tl.where((x < 0) | (x > 1), INF - INF, derivative)  # NaN (a NaN global breaks the JIT)
    with_eps = tl.where((x < eps) | (x > 1.0 - eps), 0.0, derivative)
    return tl.where(eps < 0, no_eps, with_eps)


logit_backward_op = PointwiseOp("logit_backward", _logit_backward, operands=2, scalars=("eps",), dtypes=FLOATS)


def logit_backward(grad_output, self, eps=None):
    return logit_backward_op(grad_output, self, NO_EPS if eps is None else eps)


def logit_backward_grad_input(grad_output, self, eps=None, *, grad_input):
    return logit_backward_op(grad_output, self, NO_EPS if eps is None else eps, out=grad_input)


aten = torch.ops.aten

SPECS = [
    OpSpec(
        name="logit_backward", family="pointwise",
        impls={"logit_backward": logit_backward, "logit_backward.grad_input": logit_backward_grad_input},
        call=aten.logit_backward.default,
        samples=without_values(combined(
            backward_samples(grad_input=("logit_backward.grad_input", aten.logit_backward.grad_input), domain=DOMAIN,
                             rejects=(torch.int64, torch.bool)),
            ("eps", backward_samples(domain=dict(low=-0.5, high=1.5), extra={"eps": 0.2}, broadcast=False)),
        ), [-0.0], variants=("special-values", "subnormal")),
        dtypes=FLOATS, perf=pointwise_perf(2, domain=DOMAIN),
    ),
]
