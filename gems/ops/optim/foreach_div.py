"""_foreach_div: x / s (Scalar, a ScalarList entry, a 0-d tensor) or x / y (List), for every tensor of a
list, in one launch per dtype group (gems/ops/optim/foreach.py); functional, in-place and out= forms.
fp32 divides with div_rn (IEEE, as ATen; Triton's fp32 ``/`` is approximate on the GPU). Adam's foreach
step divides its denominators by the bias corrections (ScalarList)."""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)

from gems.dtypes import FLOATS
from gems.ops.optim.foreach import NO_LAUNCH, SCALAR, SCALAR_LIST, TENSOR, foreach_samples, overloads
from gems.ops.pointwise.shared import fdiv
from gems.spec import OpSpec

NAME = "_foreach_div"
FORMS = (("Scalar", 1, SCALAR, False), ("List", 2, None, False), ("ScalarList", 1, SCALAR_LIST, False),
         ("Tensor", 1, TENSOR, False))


@triton.jit
def _div_scalar(x, y, z, s, alpha):
    return fdiv(x, s)


@triton.jit
def _div_list(x, y, z, s, alpha):
    return fdiv(x, y)


impls = overloads(NAME, FORMS, {"Scalar": _div_scalar, "List": _div_list, "ScalarList": _div_scalar,
                                "Tensor": _div_scalar}, host_reads_cpu_scalar=True)

SPECS = [
    OpSpec(name="foreach_div", family="optim", impls=impls, call=torch._foreach_div,
           samples=foreach_samples(NAME, forms=FORMS, positive=(1,)), dtypes=FLOATS, no_launch=NO_LAUNCH),
]
