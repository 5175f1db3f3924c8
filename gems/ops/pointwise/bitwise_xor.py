"""bitwise_xor (Tensor, Scalar, Scalar_Tensor, in-place, out=); bool: logical xor. ``__xor__`` and
``__ixor__`` (``^``, ``^=``) are CompositeImplicitAutograd aliases that ATen decomposes to bitwise_xor /
bitwise_xor_ before the backend key: gems serves them through bitwise_xor's overloads. Overloads and
samples shared with bitwise_and and bitwise_or are in bitwise_shared.py."""

import operator

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import INTS_AND_BOOL
from gems.ops.pointwise.bitwise_shared import binary_impls, binary_samples, operator_aliases
from gems.ops.pointwise.shared import pointwise_perf
from gems.spec import OpSpec


@triton.jit
def _xor(x, y):
    return x ^ y


xor_op = PointwiseOp("bitwise_xor", _xor, operands=2, dtypes=INTS_AND_BOOL)

SPECS = [
    OpSpec(
        name="bitwise_xor", family="pointwise", impls=binary_impls("bitwise_xor", xor_op), call=torch.bitwise_xor,
        samples=binary_samples("bitwise_xor", torch.bitwise_xor, lambda x, y: x.bitwise_xor_(y),
                               operator_aliases("bitwise_xor", "xor", operator.xor)),
        dtypes=INTS_AND_BOOL, tolerance="exact", perf=pointwise_perf(2),
    ),
]
