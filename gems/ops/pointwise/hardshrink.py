"""hardshrink(lambd=0.5): 0 where -lambd <= x <= lambd, else x (NaN kept); lambd is rounded to the
tensor's dtype first, as ATen's CUDA kernel converts it (Scalar::to<scalar_t>). Floating dtypes only.
Its backward is hardshrink_backward. The samples' lambd values are exact in every dtype: whether x = 0.1
lies inside a band of half-width 0.1 depends on 0.1's rounding, which the float64 oracle does not share.
"""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS
from gems.ops.pointwise.unary_shared import scalar_variants, unary_spec, value_samples


@triton.jit
def in_band(x, lambd, COMMON: tl.constexpr):
    """-lambd <= x <= lambd with lambd in the tensor's dtype (hardshrink and both shrink backwards)."""
    lambd = lambd.to(COMMON).to(x.dtype)
    return (x >= lambd * -1.0) & (x <= lambd)


@triton.jit
def _hardshrink(x, lambd, COMMON: tl.constexpr):
    return tl.where(in_band(x, lambd, COMMON), 0.0, x)


hardshrink_op = PointwiseOp("hardshrink", _hardshrink, operands=1, scalars=("lambd",), dtypes=FLOATS,
                            common_arg=True)


def hardshrink(self, lambd=0.5):
    return hardshrink_op(self, float(lambd))


def hardshrink_out(self, lambd=0.5, *, out):
    return hardshrink_op(self, float(lambd), out=out)


SPECS = [
    unary_spec(
        hardshrink_op, torch.nn.functional.hardshrink, inplace=False, dtypes=FLOATS,
        rejects=(torch.int64, torch.bool), grad_expects=("hardshrink", "hardshrink_backward"),
        impls={"hardshrink": hardshrink, "hardshrink.out": hardshrink_out},
        out=("hardshrink.out", lambda x, **kw: torch.ops.aten.hardshrink.out(x, **kw, out=x.new_empty(0))),
        more=(scalar_variants(("lambd", {"lambd": 1.75}), ("lambd-zero", {"lambd": 0.0}), grad=True),
              ("lambd", value_samples([0.125, -0.125, ("ulp-above", 0.125), ("ulp-below", -0.125), 0.0, -0.0],
                                      kwargs={"lambd": 0.125})))),
]
