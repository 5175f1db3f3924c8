"""nan_to_num(nan=None, posinf=None, neginf=None): NaN, +inf and -inf replaced by the given numbers, by
default 0, the dtype's largest finite value and its lowest. As ATen's CUDA kernel, the replacements are
converted to the tensor's dtype (a double rounded to fp32 first for fp16/bf16: static_cast through
float); integer and bool tensors are copied unchanged.
"""

import math

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)

from gems.codegen.pointwise import PointwiseOp
from gems.ops.pointwise.unary_shared import scalar_variants, unary_spec, value_samples

INF = tl.constexpr(float("inf"))
# fp32's largest finite value plus half an ulp: doubles from here on round to infinity in fp32.
FP32_ROUNDS_TO_INF = 3.4028235677973366e38
# (largest, lowest) finite value per floating dtype: the default replacements of +inf and -inf.
_LIMITS = {d: (torch.finfo(d).max, torch.finfo(d).min)
           for d in (torch.float16, torch.bfloat16, torch.float32, torch.float64)}


@triton.jit
def _nan_to_num(x, nan, posinf, neginf, COMMON: tl.constexpr):
    if x.dtype.is_floating():
        r = tl.where(x != x, nan.to(COMMON).to(x.dtype),
                     tl.where(x == INF, posinf.to(COMMON).to(x.dtype),
                              tl.where(x == -INF, neginf.to(COMMON).to(x.dtype), x)))
    else:
        r = x
    return r


nan_to_num_op = PointwiseOp("nan_to_num", _nan_to_num, operands=1, scalars=("nan", "posinf", "neginf"),
                            common_arg=True)


def _replacements(self, nan, posinf, neginf):
    if not self.dtype.is_floating_point:
        return 0.0, 0.0, 0.0  # a copy: the kernel reads no replacement (a huge one would not fit its fp32 argument)
    largest, lowest = _LIMITS.get(self.dtype, (0.0, 0.0))
    values = (0.0 if nan is None else nan, largest if posinf is None else posinf,
              lowest if neginf is None else neginf)
    if self.dtype is torch.float64:
        return values
    # The kernel takes fp32 numbers: a double past fp32's range is the infinity ATen's cast to fp32 makes of it.
    return tuple(math.copysign(math.inf, v) if abs(v) >= FP32_ROUNDS_TO_INF else v for v in values)


def nan_to_num(self, nan=None, posinf=None, neginf=None):
    return nan_to_num_op(self, *_replacements(self, nan, posinf, neginf))


def nan_to_num_(self, nan=None, posinf=None, neginf=None):
    return nan_to_num_op(self, *_replacements(self, nan, posinf, neginf), out=self, inplace=True)


def nan_to_num_out(self, nan=None, posinf=None, neginf=None, *, out):
    return nan_to_num_op(self, *_replacements(self, nan, posinf, neginf), out=out)


_SPECIALS = [float("nan"), float("inf"), -float("inf"), -0.0, 1.5, 65504.0, 70000.0]

SPECS = [
    unary_spec(
        nan_to_num_op, torch.nan_to_num,
        impls={"nan_to_num": nan_to_num, "nan_to_num_": nan_to_num_, "nan_to_num.out": nan_to_num_out},
        more=(scalar_variants(("replacements", {"nan": 2.5, "posinf": 1e3, "neginf": -7.0}),
                              ("replacements-overflow", {"nan": -0.0, "posinf": 1e300, "neginf": 0.1})),
              ("replacements", value_samples(_SPECIALS, kwargs={"nan": 0.1, "posinf": 1e39, "neginf": -3.0})))),
]
