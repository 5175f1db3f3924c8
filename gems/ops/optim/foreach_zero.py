"""_foreach_zero_: every tensor of a list filled with zeros, in one launch per dtype group
(gems/ops/optim/foreach.py; the kernel reads nothing). ATen's functional ``_foreach_zero`` and its out=
form are composites that call it."""

import torch
import triton
import triton.language as tl

from gems.dtypes import FLOATS
from gems.ops.optim.foreach import NO_LAUNCH, foreach_samples, overloads
from gems.spec import OpSpec

NAME = "_foreach_zero"
FORMS = (("", 1, None, False),)


@triton.jit
def _zero(x, y, z, s, alpha):
    return tl.full(x.shape, 0, x.dtype)


impls = overloads(NAME, FORMS, {"": _zero}, inputs=(), functional=False)

SPECS = [
    OpSpec(name="foreach_zero", family="optim", impls=impls, call=torch._foreach_zero_,
           samples=foreach_samples(NAME, forms=FORMS, inplace_only=True), dtypes=FLOATS, no_launch=NO_LAUNCH),
]
