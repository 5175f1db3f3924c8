"""round: to the nearest integer, halves to even (libdevice's rint, as ATen's nearbyint), and
round(decimals=d): ``rint(x * 10^d) / 10^d``, or ``rint(x / 10^-d) * 10^-d`` for d < 0. ATen's CUDA kernel
computes that in the tensor's dtype: 10^|d| rounded to it (inf for fp16 from d = 5 on), and for fp16/bf16
the product or quotient rounded to it before rint (c10::Half arithmetic), the last step in fp32. Its CPU
kernel computes all of it in fp32. gems follows the device's: ``dtype_arithmetic`` is on except on the CPU.

Integers are their own rounding (ATen copies them); with ``decimals`` (even 0) ATen refuses them with
NotImplementedError, as it refuses bool everywhere: the op is not declared for those, so ATen runs and
raises.
"""

import math

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS, INTS
from gems.ops.pointwise.shared import div_rn, edge_samples, fdiv
from gems.ops.pointwise.unary_shared import error_calls, unary_spec
from gems.runtime.registration import Fallback

# 10^308 is the largest power of ten a double holds; std::pow(10, d) is inf beyond.
_MAX_DOUBLE_EXPONENT = 308


@triton.jit
def _round(x):
    if x.dtype.is_floating():
        r = libdevice.rint(x)
    else:
        r = x
    return r


@triton.jit
def _in_dtype(value, dtype_arithmetic, COMMON: tl.constexpr):
    """value rounded to the tensor's dtype where the device's ATen computes in it (see the docstring)."""
    return tl.where(dtype_arithmetic != 0, value.to(COMMON).to(value.dtype), value)


@triton.jit
def _round_up_scaled(x, scale, dtype_arithmetic, COMMON: tl.constexpr):
    """decimals > 0: rint(x * 10^d) / 10^d."""
    scale = _in_dtype(scale.to(x.dtype), dtype_arithmetic, COMMON)
    return div_rn(libdevice.rint(_in_dtype(x * scale, dtype_arithmetic, COMMON)), scale)


@triton.jit
def _round_down_scaled(x, scale, dtype_arithmetic, COMMON: tl.constexpr):
    """decimals < 0: rint(x / 10^-d) * 10^-d."""
    scale = _in_dtype(scale.to(x.dtype), dtype_arithmetic, COMMON)
    return libdevice.rint(_in_dtype(fdiv(x, scale), dtype_arithmetic, COMMON)) * scale


round_op = PointwiseOp("round", _round, operands=1, dtypes=FLOATS + INTS)
round_up_op = PointwiseOp("round", _round_up_scaled, operands=1, scalars=("scale", "dtype_arithmetic"),
                          dtypes=FLOATS, common_arg=True)
round_down_op = PointwiseOp("round", _round_down_scaled, operands=1, scalars=("scale", "dtype_arithmetic"),
                            dtypes=FLOATS, common_arg=True)


def _decimals_op(self, decimals):
    """(op, scalars) for round(decimals=...); ATen refuses integer tensors here."""
    if not self.is_floating_point():
        raise Fallback("round with decimals of an integer tensor: ATen raises NotImplementedError")
    if decimals == 0:
        return round_op, ()
    exponent = abs(decimals)
    scale = 10.0**exponent if exponent <= _MAX_DOUBLE_EXPONENT else math.inf
    return (round_up_op if decimals > 0 else round_down_op), (scale, int(self.device.type != "cpu"))


def round_decimals(self, *, decimals):
    op, scalars = _decimals_op(self, decimals)
    return op(self, *scalars)


def round_decimals_(self, *, decimals):
    op, scalars = _decimals_op(self, decimals)
    return op(self, *scalars, out=self, inplace=True)


def round_decimals_out(self, *, decimals, out):
    op, scalars = _decimals_op(self, decimals)
    return op(self, *scalars, out=out)


def _decimals_samples(dtype, device, quick):
    """round(decimals=d) of x = k / 64 in [-20, 20]: x * 10^d for d <= 5 is exact in fp32, so its ties are the
    float64 oracle's ties (random values would leave ties to each precision's rounding of x * 10^d)."""
    from gems.spec import Sample
    from gems.testing.samples import make_tensor, shape_for

    def grid():
        x = make_tensor(shape_for(quick), torch.float64, "cpu", low=-20.0, high=20.0)
        return ((x * 64).round() / 64).to(dtype).to(device),

    return [Sample(f"decimals{d}", grid, {"decimals": d}, expects="round.decimals") for d in (2, -1, 5, -3, 0)]


def _decimals_out(x, decimals):
    return torch.round(x, decimals=decimals, out=torch.empty(0, dtype=x.dtype, device=x.device))


SPECS = [
    unary_spec(
        round_op, torch.round, dtypes=FLOATS + INTS, rejects=(torch.bool,),
        impls={"round.decimals": round_decimals, "round_.decimals": round_decimals_,
               "round.decimals_out": round_decimals_out},
        more=(edge_samples("exact_half_samples", torch.round, expects="round"),
              _decimals_samples,
              ("decimals", edge_samples("exact_half_samples", torch.round, expects="round.decimals",
                                        kwargs={"decimals": 0})),
              ("decimals-out", edge_samples("exact_half_samples", _decimals_out, expects="round.decimals_out",
                                            kwargs={"decimals": 1})),
              ("decimals-inplace", edge_samples("exact_half_samples", torch.Tensor.round_, expects="round_.decimals",
                                                kwargs={"decimals": -1})),
              error_calls(("error-decimals-int", lambda x: torch.round(x.to(torch.int32), decimals=1))))),
]
