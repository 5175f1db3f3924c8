"""special_i1: I1(x), the modified Bessel function of the first kind of order 1 (bessel_shared.py), odd in
x (i1(-0.0) is +0.0, as ATen's). ATen's CUDA kernel computes float32 and float64 only: fp16/bf16 inputs
are not declared (ATen runs, and refuses them on CUDA); integers and bool give float32. Its derivative
calls i0.
"""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import PointwiseOp, Promotion
from gems.dtypes import INTS
from gems.ops.pointwise.bessel_shared import bessel
from gems.ops.pointwise.i0 import DOMAIN
from gems.ops.pointwise.unary_shared import unary_spec, value_samples

DTYPES = (torch.float32, torch.float64)  # ATen's CUDA i1 and i1e dispatch these only


@triton.jit
def _special_i1(x):
    r = bessel(x, 1)
    return tl.where(x < 0, r * -1.0, r)


special_i1_op = PointwiseOp("special_i1", _special_i1, operands=1, promotion=Promotion.INT_TO_FLOAT, dtypes=DTYPES)

SPECS = [
    unary_spec(special_i1_op, torch.special.i1, inplace=False, dtypes=DTYPES + INTS + (torch.bool,), domain=DOMAIN,
               grad_expects=("special_i1", "i0"),
               more=(value_samples([10.0, ("ulp-above", 10.0), 20.0, ("ulp-above", 20.0), 88.0, 91.0, -93.0, -0.0,
                                    1e-30, -1e-30]),)),
]
