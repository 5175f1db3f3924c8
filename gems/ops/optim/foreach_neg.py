"""_foreach_neg: -x for every tensor of a list, in one launch per dtype group (gems/ops/optim/foreach.py);
functional, in-place and out= forms. Negated as x * -1 (Triton's -x is 0 - x, which makes -(+0.0)
+0.0). Adam's and SGD's foreach steps negate the grads for ``maximize=True``."""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)

from gems.dtypes import FLOATS
from gems.ops.optim.foreach import NO_LAUNCH, foreach_samples, overloads
from gems.spec import OpSpec

NAME = "_foreach_neg"
FORMS = (("", 1, None, False),)


@triton.jit
def _neg(x, y, z, s, alpha):
    return x * -1.0


impls = overloads(NAME, FORMS, {"": _neg})

SPECS = [
    OpSpec(name="foreach_neg", family="optim", impls=impls, call=torch._foreach_neg,
           samples=foreach_samples(NAME, forms=FORMS), dtypes=FLOATS, no_launch=NO_LAUNCH),
]
