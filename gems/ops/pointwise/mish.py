"""mish: x tanh(softplus(x)) = x tanh(log1p(exp(x))), ATen's CUDA formula with libdevice's functions for fp32
and fp64; for fp16/bf16 results (computed in fp32) one exp and a division (mish_terms). Floating dtypes only.
Its backward is mish_backward.
"""

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS
from gems.ops.pointwise.unary_shared import unary_spec


@triton.jit
def tanh_softplus(x):
    return libdevice.tanh(libdevice.log1p(libdevice.exp(x)))


@triton.jit
def mish_terms(x):
    """(e, n) with e = exp(x) (Triton's fast exp) and n = e (e + 2), so that tanh(softplus(x)) = n / (n + 2):
    (1 + e)^2 = n + 1, and tanh(log(w)) = (w^2 - 1) / (w^2 + 1). One exp where ATen's formula takes three
    libdevice calls. Past x = 20 (n overflows from x = 44) the caller takes the limit."""
    e = tl.exp(x)
    return e, e * (e + 2.0)


@triton.jit
def _mish(x, COMMON: tl.constexpr):
    if (COMMON == tl.float16) or (COMMON == tl.bfloat16):
        # 16-bit results: x n / (n + 2) with Triton's approximate '/', x itself past 20 (tanh(softplus) is 1
        # within 2^-57 there). ATen's formula in libdevice made mish compute-bound, 0.90x ATen at 64M on an H200.
        e, n = mish_terms(x)
        r = tl.where(x > 20.0, x, x * (n / (n + 2.0)))
    else:
        r = x * tanh_softplus(x)
    return r


mish_op = PointwiseOp("mish", _mish, operands=1, dtypes=FLOATS, common_arg=True)

SPECS = [
    unary_spec(mish_op, torch._C._nn.mish, inplace=torch._C._nn.mish_, dtypes=FLOATS,
               rejects=(torch.int64, torch.bool), grad_expects=("mish", "mish_backward"),
               domain=dict(low=-10.0, high=10.0)),
]
