"""bitwise_or (Tensor, Scalar, Scalar_Tensor, in-place, out=); bool: logical or. ``__or__`` and
``__ior__`` are CompositeImplicitAutograd aliases that ATen decomposes to bitwise_or / bitwise_or_
before the backend key: gems serves them through bitwise_or's overloads."""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import INTS_AND_BOOL
from gems.ops.pointwise.bitwise_shared import binary_impls, binary_samples
from gems.ops.pointwise.shared import pointwise_perf
from gems.spec import OpSpec


@triton.jit
def _or(x, y):
    return x | y


or_op = PointwiseOp("bitwise_or", _or, operands=2, dtypes=INTS_AND_BOOL)


def _two(dtype, device, quick):
    from gems.testing.samples_extra import two_tensors

    return two_tensors()(dtype, device, quick)


def _one(dtype, device, quick):
    from gems.testing.samples_extra import one_tensor

    return one_tensor()(dtype, device, quick)


# | and |= run __or__ / __ior__, which ATen decomposes into bitwise_or's overloads.
_ALIASES = [
    ("or-operator", lambda x, y: x | y, "bitwise_or.Tensor", _two),
    ("or-operator-scalar", lambda x: x | 5, "bitwise_or.Scalar", _one),
    ("or-dunder", lambda x, y: torch.ops.aten.__or__.Tensor(x, y), "bitwise_or.Tensor", _two),
    ("or-dunder-scalar", lambda x: torch.ops.aten.__or__.Scalar(x, 5), "bitwise_or.Scalar", _one),
    ("ior-operator", lambda x, y: x.__ior__(y), "bitwise_or_.Tensor", _two),
    ("ior-operator-scalar", lambda x: x.__ior__(5), "bitwise_or_.Scalar", _one),
    ("ior-dunder", lambda x, y: torch.ops.aten.__ior__.Tensor(x, y), "bitwise_or_.Tensor", _two),
    ("ior-dunder-scalar", lambda x: torch.ops.aten.__ior__.Scalar(x, 5), "bitwise_or_.Scalar", _one),
]

SPECS = [
    OpSpec(
        name="bitwise_or", family="pointwise", impls=binary_impls("bitwise_or", or_op), call=torch.bitwise_or,
        samples=binary_samples("bitwise_or", torch.bitwise_or, lambda x, y: x.bitwise_or_(y), _ALIASES),
        dtypes=INTS_AND_BOOL, tolerance="exact", perf=pointwise_perf(2),
    ),
]
