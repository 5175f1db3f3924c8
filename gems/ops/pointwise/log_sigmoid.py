"""log_sigmoid: log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)), ATen's CUDA formula (no cancellation
for either sign). ATen's log_sigmoid and log_sigmoid.out are CompositeImplicitAutograd: they call
log_sigmoid_forward (and .output), which gems serves here. As on CUDA, the second result (``buffer``) is
an empty tensor: only ATen's CPU backward reads it, and gems' log_sigmoid_backward does not. Floating
dtypes only. Its backward is log_sigmoid_backward.
"""

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS
from gems.ops.pointwise.shared import pointwise_perf, unary_samples
from gems.spec import OpSpec


@triton.jit
def _log_sigmoid(x):
    return tl.where(x < 0, x, 0.0) - libdevice.log1p(libdevice.exp(tl.abs(x) * -1.0))


log_sigmoid_op = PointwiseOp("log_sigmoid", _log_sigmoid, operands=1, dtypes=FLOATS)


def log_sigmoid_forward(self):
    return log_sigmoid_op(self), self.new_empty(0)


def log_sigmoid_forward_output(self, *, output, buffer):
    log_sigmoid_op(self, out=output)
    return output, buffer


SPECS = [
    OpSpec(
        name="log_sigmoid", family="pointwise",
        impls={"log_sigmoid_forward": log_sigmoid_forward, "log_sigmoid_forward.output": log_sigmoid_forward_output},
        call=torch.nn.functional.logsigmoid,
        samples=unary_samples(out=("log_sigmoid_forward.output",
                                   lambda x: torch._C._nn.log_sigmoid(x, out=x.new_empty(0))),
                              grad=True, grad_expects=("log_sigmoid_forward", "log_sigmoid_backward"),
                              domain=dict(low=-30.0, high=30.0), rejects=(torch.int64, torch.bool)),
        dtypes=FLOATS, perf=pointwise_perf(1),
    ),
]
