"""mish: x tanh(softplus(x)) = x tanh(log1p(exp(x))), ATen's CUDA formula with libdevice's functions
(fp16/bf16 in fp32). Floating dtypes only. Its backward is mish_backward.
"""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS
from gems.ops.pointwise.unary_shared import unary_spec


@triton.jit
def tanh_softplus(x):
    return libdevice.tanh(libdevice.log1p(libdevice.exp(x)))


@triton.jit
def _mish(x):
    return x * tanh_softplus(x)


mish_op = PointwiseOp("mish", _mish, operands=1, dtypes=FLOATS)

SPECS = [
    unary_spec(mish_op, torch._C._nn.mish, inplace=torch._C._nn.mish_, dtypes=FLOATS,
               rejects=(torch.int64, torch.bool), grad_expects=("mish", "mish_backward"),
               domain=dict(low=-10.0, high=10.0)),
]
