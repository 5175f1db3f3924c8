"""_foreach_lerp: x + w * (y - x) with the weight w a Scalar, a ScalarList entry, or the tensor z of a
third list (List), for every tensor of a list, in one launch per dtype group (gems/ops/optim/foreach.py);
functional, in-place and out= forms. ATen's formula: ``|w| < 0.5 ? x + w * (y - x) : y - (y - x) * (1 -
w)``, which is exact at both ends. A row's tensors must share their dtype (ATen's RuntimeError otherwise).
Adam's foreach step updates its first moments with ``_foreach_lerp_.Scalar``."""

import torch
import triton
import triton.language as tl

from gems.dtypes import ATEN_NAMES, FLOATS
from gems.ops.optim.foreach import NO_LAUNCH, SCALAR, SCALAR_LIST, foreach_samples, overloads
from gems.spec import OpSpec

NAME = "_foreach_lerp"
FORMS = (("Scalar", 2, SCALAR, False), ("List", 3, None, False), ("ScalarList", 2, SCALAR_LIST, False))


@triton.jit
def lerp(x, y, w):
    return tl.where(tl.abs(w) < 0.5, x + w * (y - x), y - (y - x) * (1 - w))


@triton.jit
def _lerp_scalar(x, y, z, s, alpha):
    return lerp(x, y, s)


@triton.jit
def _lerp_list(x, y, z, s, alpha):
    return lerp(x, y, z)


def _same_dtype(lists):
    """ATen's lerp wants end and weight of self's dtype, row by row."""
    if len({t.dtype for tensors in lists for t in tensors}) == 1:
        return
    for row in zip(*lists):
        for what, t in zip(("end", "weight"), row[1:]):
            if t.dtype != row[0].dtype:
                raise RuntimeError(f"expected dtype {ATEN_NAMES[row[0].dtype].lower()} for `{what}` but got dtype "
                                   f"c10::{ATEN_NAMES[t.dtype]}")


impls = overloads(NAME, FORMS, {"Scalar": _lerp_scalar, "List": _lerp_list, "ScalarList": _lerp_scalar},
                  row_check=_same_dtype)

SPECS = [
    OpSpec(name="foreach_lerp", family="optim", impls=impls, call=torch._foreach_lerp,
           samples=foreach_samples(NAME, forms=FORMS, same_dtype_rows=True), dtypes=FLOATS, no_launch=NO_LAUNCH),
]
