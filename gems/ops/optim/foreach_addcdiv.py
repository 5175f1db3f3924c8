"""_foreach_addcdiv: x + s * (y / z), the scalar s a Scalar, a ScalarList entry or an entry of a 1-d CPU
tensor (Tensor), for every tensor of a list, in one launch per dtype group (gems/ops/optim/foreach.py);
functional, in-place and out= forms; fp32 divides with div_rn (IEEE, as ATen). Adam's foreach step
updates its params with ``_foreach_addcdiv_.ScalarList`` (the step sizes)."""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)

from gems.dtypes import FLOATS
from gems.ops.optim.foreach import CPU_SCALARS, NO_LAUNCH, SCALAR, SCALAR_LIST, foreach_samples, overloads
from gems.ops.pointwise.shared import fdiv
from gems.spec import OpSpec

NAME = "_foreach_addcdiv"
FORMS = (("Scalar", 3, SCALAR, False), ("ScalarList", 3, SCALAR_LIST, False), ("Tensor", 3, CPU_SCALARS, False))


@triton.jit
def _addcdiv(x, y, z, s, alpha):
    return x + s * fdiv(y, z)


impls = overloads(NAME, FORMS, {"Scalar": _addcdiv, "ScalarList": _addcdiv, "Tensor": _addcdiv})

SPECS = [
    OpSpec(name="foreach_addcdiv", family="optim", impls=impls, call=torch._foreach_addcdiv,
           samples=foreach_samples(NAME, forms=FORMS, positive=(2,)), dtypes=FLOATS, no_launch=NO_LAUNCH),
]
