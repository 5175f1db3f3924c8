"""_foreach_sqrt: the square root of every tensor of a list, in one launch per dtype group
(gems/ops/optim/foreach.py); functional, in-place and out= forms. fp32 uses sqrt_rn (correctly rounded,
as ATen; Triton's fp32 sqrt is approximate on the GPU). Adam's foreach step takes the root of its second
moments with ``_foreach_sqrt``."""

import torch
import triton
import triton.language as tl

from gems.dtypes import FLOATS
from gems.ops.optim.foreach import NO_LAUNCH, foreach_samples, overloads
from gems.spec import OpSpec

NAME = "_foreach_sqrt"
FORMS = (("", 1, None, False),)


@triton.jit
def _sqrt(x, y, z, s, alpha):
    if x.dtype == tl.float32:
        r = tl.sqrt_rn(x)
    else:
        r = tl.sqrt(x)
    return r


impls = overloads(NAME, FORMS, {"": _sqrt})

SPECS = [
    OpSpec(name="foreach_sqrt", family="optim", impls=impls, call=torch._foreach_sqrt,
           samples=foreach_samples(NAME, forms=FORMS, positive=(0,)), dtypes=FLOATS, no_launch=NO_LAUNCH),
]
