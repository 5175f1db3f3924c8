"""_foreach_addcmul: x + s * (y * z), the scalar s a Scalar, a ScalarList entry or an entry of a 1-d CPU
tensor (Tensor), for every tensor of a list, in one launch per dtype group (gems/ops/optim/foreach.py);
functional, in-place and out= forms (ATen's foreach functor's order of operations). Adam's foreach step
updates its second moments with ``_foreach_addcmul_.Scalar``."""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)

from gems.dtypes import FLOATS
from gems.ops.optim.foreach import CPU_SCALARS, NO_LAUNCH, SCALAR, SCALAR_LIST, foreach_samples, overloads
from gems.spec import OpSpec

NAME = "_foreach_addcmul"
FORMS = (("Scalar", 3, SCALAR, False), ("ScalarList", 3, SCALAR_LIST, False), ("Tensor", 3, CPU_SCALARS, False))


@triton.jit
def _addcmul(x, y, z, s, alpha):
    return x + s * (y * z)


impls = overloads(NAME, FORMS, {"Scalar": _addcmul, "ScalarList": _addcmul, "Tensor": _addcmul})

SPECS = [
    OpSpec(name="foreach_addcmul", family="optim", impls=impls, call=torch._foreach_addcmul,
           samples=foreach_samples(NAME, forms=FORMS), dtypes=FLOATS, no_launch=NO_LAUNCH),
]
