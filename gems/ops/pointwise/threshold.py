"""threshold(threshold, value): value where x <= threshold, else x (NaN kept). As ATen's CUDA kernel, both
numbers are converted to the tensor's dtype first (Scalar::to<scalar_t>: an integer tensor truncates them
and refuses what overflows, fp16/bf16 round them). Every numeric dtype; bool is refused by ATen. Its
backward is threshold_backward (already served).
"""

import torch
import triton
import triton.language as tl

from gems.checks import checked_scalar
from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import NUMERIC
from gems.ops.pointwise.unary_shared import error_calls, scalar_variants, unary_spec


@triton.jit
def _threshold(x, threshold, value, COMMON: tl.constexpr):
    return tl.where(x <= threshold.to(COMMON).to(x.dtype), value.to(COMMON).to(x.dtype), x)


threshold_op = PointwiseOp("threshold", _threshold, operands=1, scalars=("threshold", "value"), dtypes=NUMERIC,
                           common_arg=True)


def _numbers(self, threshold, value):
    return checked_scalar(threshold, self.dtype), checked_scalar(value, self.dtype)


def threshold(self, threshold, value):
    return threshold_op(self, *_numbers(self, threshold, value))


def threshold_(self, threshold, value):
    return threshold_op(self, *_numbers(self, threshold, value), out=self, inplace=True)


def threshold_out(self, threshold, value, *, out):
    return threshold_op(self, *_numbers(self, threshold, value), out=out)


def _call(x, threshold=0.5, value=-1.5, **kwargs):
    return torch.threshold(x, threshold, value, **kwargs)


def _call_(x, threshold=0.5, value=-1.5):
    return torch.threshold_(x, threshold, value)


SPECS = [
    unary_spec(
        threshold_op, _call, inplace=_call_, dtypes=NUMERIC, rejects=(torch.bool,),
        grad_expects=("threshold", "threshold_backward"),
        impls={"threshold": threshold, "threshold_": threshold_, "threshold.out": threshold_out},
        more=(scalar_variants(("fractional", {"threshold": 2.7, "value": 3.9}), ("negative", {"threshold": -20,
                              "value": 7}), grad=True),
              error_calls(("error-value-overflow", lambda x: torch.threshold(x.to(torch.int8), 1, 300)),
                          ("error-half-overflow", lambda x: torch.threshold(x.half(), 0.5, 1e6))))),
]
