"""_foreach_add: x + s (Scalar, a ScalarList entry, a 0-d tensor times alpha) or x + alpha * y (List), for
every tensor of a list, in one launch per dtype group (gems/ops/optim/foreach.py); functional, in-place
and out= forms. Adam's foreach step adds eps to its denominators (Scalar) and, for weight decay, the
params to the grads (List)."""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)

from gems.dtypes import FLOATS
from gems.ops.optim.foreach import NO_LAUNCH, SCALAR, SCALAR_LIST, TENSOR, foreach_samples, overloads
from gems.spec import OpSpec

NAME = "_foreach_add"
FORMS = (("Scalar", 1, SCALAR, False), ("List", 2, None, True), ("ScalarList", 1, SCALAR_LIST, False),
         ("Tensor", 1, TENSOR, True))


@triton.jit
def _add_scalar(x, y, z, s, alpha):
    return x + s * alpha


@triton.jit
def _add_list(x, y, z, s, alpha):
    return x + y * alpha


impls = overloads(NAME, FORMS, {"Scalar": _add_scalar, "List": _add_list, "ScalarList": _add_scalar,
                                 "Tensor": _add_scalar})

SPECS = [
    OpSpec(name="foreach_add", family="optim", impls=impls, call=torch._foreach_add,
           samples=foreach_samples(NAME, forms=FORMS), dtypes=FLOATS, no_launch=NO_LAUNCH),
]
