"""trunc: x rounded toward zero (NaN, infinities and signed zeros kept).
Integers are their own truncation (ATen copies them); bool raises ATen's NotImplementedError (the op is not
declared for it, so ATen runs and refuses it). fp16/bf16 are computed in fp32 (exact: the result is an
integer of the input's dtype).
fix, a CompositeImplicitAutograd alias, runs this operator's overloads.
"""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS, INTS
from gems.ops.pointwise.shared import edge_samples
from gems.ops.pointwise.unary_shared import alias_calls, unary_spec


@triton.jit
def _trunc(x):
    if x.dtype.is_floating():
        r = libdevice.trunc(x)
    else:
        r = x
    return r


trunc_op = PointwiseOp("trunc", _trunc, operands=1, dtypes=FLOATS + INTS)

SPECS = [
    unary_spec(trunc_op, torch.trunc, dtypes=FLOATS + INTS, rejects=(torch.bool,),
               more=(edge_samples("exact_half_samples", torch.trunc, expects="trunc"),
                     alias_calls(("fix", torch.fix, "trunc")))),
]
