"""ceil: the least integer not below x (NaN, infinities and signed zeros kept).
Integers are their own ceiling (ATen copies them); bool raises ATen's NotImplementedError (the op is not
declared for it, so ATen runs and refuses it). fp16/bf16 are computed in fp32 (exact: the result is an
integer of the input's dtype).
"""

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS, INTS
from gems.ops.pointwise.shared import edge_samples
from gems.ops.pointwise.unary_shared import unary_spec


@triton.jit
def _ceil(x):
    if x.dtype.is_floating():
        # (0, 1) is decided here: Triton links libdevice with FTZ on NVIDIA GPUs, so its fp32 ceil of a
        # positive subnormal is 0
        r = tl.where((x > 0) & (x < 1), 1.0, libdevice.ceil(x))
    else:
        r = x
    return r


ceil_op = PointwiseOp("ceil", _ceil, operands=1, dtypes=FLOATS + INTS)

SPECS = [
    unary_spec(ceil_op, torch.ceil, dtypes=FLOATS + INTS, rejects=(torch.bool,),
               more=(edge_samples("exact_half_samples", torch.ceil, expects="ceil"),)),
]
