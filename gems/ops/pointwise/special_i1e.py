"""special_i1e: I1(x) e^-|x|, the exponentially scaled modified Bessel function of order 1
(bessel_shared.py), odd in x. Declared for float32 and float64 (and integers and bool, which give
float32), as ATen's CUDA kernel; see special_i1.py. Its derivative calls special_i0e and sgn.
"""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import PointwiseOp, Promotion
from gems.dtypes import INTS
from gems.ops.pointwise.bessel_shared import bessel_scaled
from gems.ops.pointwise.i0 import DOMAIN
from gems.ops.pointwise.special_i1 import DTYPES
from gems.ops.pointwise.unary_shared import unary_spec, value_samples


@triton.jit
def _special_i1e(x):
    r = bessel_scaled(x, 1)
    return tl.where(x < 0, r * -1.0, r)


special_i1e_op = PointwiseOp("special_i1e", _special_i1e, operands=1, promotion=Promotion.INT_TO_FLOAT,
                             dtypes=DTYPES)

SPECS = [
    unary_spec(special_i1e_op, torch.special.i1e, inplace=False, dtypes=DTYPES + INTS + (torch.bool,),
               domain=DOMAIN, grad_expects=("special_i1e", "special_i0e", "sgn"),
               more=(value_samples([10.0, ("ulp-above", 10.0), 20.0, ("ulp-above", 20.0), 100.0, -1e4, -0.0]),)),
]
