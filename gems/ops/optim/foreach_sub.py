"""_foreach_sub: x - s (Scalar, a ScalarList entry) or x - alpha * y (List), for every tensor of a list, in
one launch per dtype group (gems/ops/optim/foreach.py); functional, in-place and out= forms. A fused
optimizer's caller takes found_inf back off its steps with ``_foreach_sub_.List``."""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)

from gems.dtypes import FLOATS
from gems.ops.optim.foreach import NO_LAUNCH, SCALAR, SCALAR_LIST, foreach_samples, overloads
from gems.spec import OpSpec

NAME = "_foreach_sub"
FORMS = (("Scalar", 1, SCALAR, False), ("List", 2, None, True), ("ScalarList", 1, SCALAR_LIST, False))


@triton.jit
def _sub_scalar(x, y, z, s, alpha):
    return x - s


@triton.jit
def _sub_list(x, y, z, s, alpha):
    return x - y * alpha


impls = overloads(NAME, FORMS, {"Scalar": _sub_scalar, "List": _sub_list, "ScalarList": _sub_scalar})

SPECS = [
    OpSpec(name="foreach_sub", family="optim", impls=impls, call=torch._foreach_sub,
           samples=foreach_samples(NAME, forms=FORMS), dtypes=FLOATS, no_launch=NO_LAUNCH),
]
