"""_foreach_copy: src copied into every tensor of a list (converted to its dtype, broadcast to its shape),
in one launch per dtype group (gems/ops/optim/foreach.py): in place (``_foreach_copy_``), or into new
tensors like self (``_foreach_copy``). A copy between devices is ATen's (a transfer, not a kernel);
``non_blocking`` changes nothing for a kernel on one device."""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)

from gems.dtypes import FLOATS
from gems.ops.optim.foreach import NO_LAUNCH, foreach_samples, overloads
from gems.spec import OpSpec

NAME = "_foreach_copy"
FORMS = (("", 2, None, False),)


@triton.jit
def _copy(x, y, z, s, alpha):
    return x


impls = overloads(NAME, FORMS, {"": _copy}, inputs=(1,), across_devices=True, keeps_dtype=True)

SPECS = [
    OpSpec(name="foreach_copy", family="optim", impls=impls, call=torch._foreach_copy_,
           samples=foreach_samples(NAME, forms=FORMS, self_shaped=True), dtypes=FLOATS, no_launch=NO_LAUNCH,
           # Measured on an H200 (2026-11-26): a CPU tensor in a list on the GPU is a transfer, which ATen's
           # per-tensor copy_ serves (gems computes on one device).
           deliberate_fallbacks={"default-mixed-devices": "a tensor on another device than its list's: a "
                                                          "transfer, served by ATen's per-tensor copy"}),
]
