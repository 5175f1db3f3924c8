"""softplus(beta=1, threshold=20): x where x * beta > threshold, else log1p(exp(x * beta)) / beta (ATen's
CUDA formula: libdevice's exp and log1p, a correctly rounded division; beta and threshold in fp32 for
fp16/bf16/fp32, fp64 for fp64). Floating dtypes only; no in-place form. Its backward is softplus_backward.
"""

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS
from gems.ops.pointwise.shared import div_rn
from gems.ops.pointwise.unary_shared import scalar_variants, unary_spec, value_samples


@triton.jit
def _softplus(x, beta, threshold):
    scaled = x * beta
    return tl.where(scaled > threshold, x, div_rn(libdevice.log1p(libdevice.exp(scaled)), beta))


softplus_op = PointwiseOp("softplus", _softplus, operands=1, scalars=("beta", "threshold"), dtypes=FLOATS)


def softplus(self, beta=1, threshold=20):
    return softplus_op(self, float(beta), float(threshold))


def softplus_out(self, beta=1, threshold=20, *, out):
    return softplus_op(self, float(beta), float(threshold), out=out)


SPECS = [
    unary_spec(
        softplus_op, torch._C._nn.softplus, inplace=False, dtypes=FLOATS, rejects=(torch.int64, torch.bool),
        grad_expects=("softplus", "softplus_backward"), domain=dict(low=-30.0, high=30.0),
        impls={"softplus": softplus, "softplus.out": softplus_out},
        more=(scalar_variants(("beta-threshold", {"beta": 2.0, "threshold": 5.0}),
                              ("negative-beta", {"beta": -0.5, "threshold": 3.0}), domain=dict(low=-10.0, high=10.0),
                              grad=True),
              value_samples([20.0, ("ulp-above", 20.0), ("ulp-below", 20.0), -100.0, 88.0, 89.0, -0.0]),
              ("threshold", value_samples([2.5, ("ulp-above", 2.5), ("ulp-below", 2.5), 60.0],
                                          kwargs={"beta": 2.0, "threshold": 5.0})))),
]
