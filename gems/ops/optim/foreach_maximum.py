"""_foreach_maximum: the larger of x and s (Scalar, a ScalarList entry) or of x and y (List), for every
tensor of a list, in one launch per dtype group (gems/ops/optim/foreach.py); functional, in-place and
out= forms. As ATen's foreach functor, ``(isnan(x) || x > y) ? x : y``: NaN in either operand wins, and
of two zeros the second one (no ordering of -0.0 below +0.0). Adam's AMSGrad step keeps its maximum of
the second moments with ``_foreach_maximum_.List``."""

import torch
import triton
import triton.language as tl

from gems.dtypes import FLOATS
from gems.ops.optim.foreach import NO_LAUNCH, SCALAR, SCALAR_LIST, foreach_samples, overloads
from gems.spec import OpSpec

NAME = "_foreach_maximum"
FORMS = (("Scalar", 1, SCALAR, False), ("List", 2, None, False), ("ScalarList", 1, SCALAR_LIST, False))


@triton.jit
def _max_scalar(x, y, z, s, alpha):
    return tl.where((x != x) | (x > s), x, s)


@triton.jit
def _max_list(x, y, z, s, alpha):
    return tl.where((x != x) | (x > y), x, y)


impls = overloads(NAME, FORMS, {"Scalar": _max_scalar, "List": _max_list, "ScalarList": _max_scalar})

SPECS = [
    OpSpec(name="foreach_maximum", family="optim", impls=impls, call=torch._foreach_maximum,
           samples=foreach_samples(NAME, forms=FORMS), dtypes=FLOATS, no_launch=NO_LAUNCH),
]
