"""hardtanh(min_val=-1, max_val=1): ATen computes it as clamp (hardtanh_out calls clamp_out), after its
own checks: bool refused, integer tensors take the bounds truncated to integers and uint8 refuses negative
ones. gems runs clamp's kernel the same way (clamp.py). Its backward is hardtanh_backward. relu6 and
relu6_ (CompositeImplicitAutograd) run hardtanh(0, 6) and hardtanh_.
"""

import torch
import triton  # noqa: F401
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)

from gems.dtypes import NUMERIC
from gems.ops.pointwise.clamp import clamp, clamp_, clamp_out
from gems.ops.pointwise.shared import combined, pointwise_perf, unary_samples
from gems.ops.pointwise.unary_shared import alias_calls, error_calls, scalar_variants
from gems.spec import OpSpec


def _bounds(self, min_val, max_val):
    if self.dtype == torch.bool:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if self.is_floating_point():
        return min_val, max_val
    low, high = int(min_val), int(max_val)  # Scalar::toLong: truncation toward zero
    if self.dtype == torch.uint8 and (low < 0 or high < 0):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    return low, high


def hardtanh(self, min_val=-1, max_val=1):
    return clamp(self, *_bounds(self, min_val, max_val))


def hardtanh_(self, min_val=-1, max_val=1):
    return clamp_(self, *_bounds(self, min_val, max_val))


def hardtanh_out(self, min_val=-1, max_val=1, *, out):
    return clamp_out(self, *_bounds(self, min_val, max_val), out=out)


def _relu6_inplace(x):
    return torch.nn.functional.relu6(x, inplace=True)


SPECS = [
    OpSpec(
        name="hardtanh", family="pointwise",
        impls={"hardtanh": hardtanh, "hardtanh_": hardtanh_, "hardtanh.out": hardtanh_out},
        call=torch._C._nn.hardtanh,
        samples=combined(
            unary_samples(out="hardtanh.out", inplace=("hardtanh_", torch._C._nn.hardtanh_), grad=True,
                          grad_expects=("hardtanh", "hardtanh_backward"), rejects=(torch.bool,)),
            scalar_variants(("bounds", {"min_val": -0.5, "max_val": 2.5}),
                            ("fractional-bounds", {"min_val": -2.7, "max_val": 1.9}),
                            ("inverted-bounds", {"min_val": 1.0, "max_val": -1.0}), grad=True),
            alias_calls(("relu6", torch.nn.functional.relu6, "hardtanh"),
                        ("relu6-inplace", _relu6_inplace, "hardtanh_"),
                        domain=dict(low=-3.0, high=9.0, int_low=-3, int_high=9)),
            error_calls(("error-uint8-negative-bounds", lambda x: torch._C._nn.hardtanh(x.to(torch.uint8), -1, 2)))),
        dtypes=NUMERIC, perf=pointwise_perf(1),
    ),
]
