"""floor: the greatest integer not above x (NaN, infinities and signed zeros kept).
Integers are their own floor (ATen copies them); bool raises ATen's NotImplementedError (the op is not
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
def _floor(x):
    if x.dtype.is_floating():
        # (-1, 0) is decided here: Triton links libdevice with FTZ on NVIDIA GPUs, so its fp32 floor of a
        # negative subnormal is -0
        r = tl.where((x < 0) & (x > -1), -1.0, libdevice.floor(x))
    else:
        r = x
    return r


floor_op = PointwiseOp("floor", _floor, operands=1, dtypes=FLOATS + INTS)

SPECS = [
    unary_spec(floor_op, torch.floor, dtypes=FLOATS + INTS, rejects=(torch.bool,),
               more=(edge_samples("exact_half_samples", torch.floor, expects="floor"),)),
]
