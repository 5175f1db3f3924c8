"""_foreach_mul: x * s (Scalar, a ScalarList entry, a 0-d tensor) or x * y (List), for every tensor of a
list, in one launch per dtype group (gems/ops/optim/foreach.py); functional, in-place and out= forms.
Adam's foreach step scales its second moments (Scalar) and AdamW its params; clip_grad_norm_ scales the
grads by a 0-d device tensor (Tensor)."""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)

from gems.dtypes import FLOATS
from gems.ops.optim.foreach import NO_LAUNCH, SCALAR, SCALAR_LIST, TENSOR, foreach_samples, overloads
from gems.spec import OpSpec

NAME = "_foreach_mul"
FORMS = (("Scalar", 1, SCALAR, False), ("List", 2, None, False), ("ScalarList", 1, SCALAR_LIST, False),
         ("Tensor", 1, TENSOR, False))


@triton.jit
def _mul_scalar(x, y, z, s, alpha):
    return x * s


@triton.jit
def _mul_list(x, y, z, s, alpha):
    return x * y


impls = overloads(NAME, FORMS, {"Scalar": _mul_scalar, "List": _mul_list, "ScalarList": _mul_scalar,
                                "Tensor": _mul_scalar}, host_reads_cpu_scalar=True)

SPECS = [
    OpSpec(name="foreach_mul", family="optim", impls=impls, call=torch._foreach_mul,
           samples=foreach_samples(NAME, forms=FORMS), dtypes=FLOATS, no_launch=NO_LAUNCH),
]
