"""remainder (Tensor, Scalar, Scalar_Tensor, in-place, out=): Python's modulo, x - floor(x / y) * y with
the sign of y: fmod (fmod.py's kernel), moved by y where it is nonzero and its sign differs from y's, as
ATen's kernels do (for floats, in the compute dtype: remainder(-1e-30, 1.0) is 1.0). Integer division by
zero raises RuntimeError("ZeroDivisionError") on CPU, as ATen's CPU kernel does, and is left undefined
elsewhere, as CUDA's is."""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import NUMERIC
from gems.ops.pointwise.div import ZERO_DIVISION_CHECK, check_zero_division
from gems.ops.pointwise.fmod import DIVISOR, PERF_DIVISOR, c_fmod, modulo_samples
from gems.ops.pointwise.shared import checked_binary_overloads, pointwise_perf
from gems.spec import OpSpec


@triton.jit
def _remainder(x, y, STORED: tl.constexpr):
    r = c_fmod(x, y, STORED)
    if not x.dtype.is_int_unsigned():
        r = tl.where((r != 0) & ((r < 0) != (y < 0)), r + y, r)
    return r


remainder_op = PointwiseOp("remainder", _remainder, operands=2, dtypes=NUMERIC, common_arg=True)
remainder, remainder_, remainder_out = checked_binary_overloads(remainder_op, check_zero_division)


def _samples(dtype, device, quick):
    from gems.testing.samples_extra import alias_samples, one_tensor, two_tensors

    nonzero = two_tensors(rhs_domain=DIVISOR, nonzero=True)
    return alias_samples(modulo_samples("remainder", torch.remainder), [
        ("scalar-tensor", lambda x, y: torch.remainder(3, y), "remainder.Scalar_Tensor", nonzero),
        ("scalar-tensor-overload", lambda x, y: torch.ops.aten.remainder.Scalar_Tensor(-2.5, y),
         "remainder.Scalar_Tensor", nonzero),
        ("operator", lambda x, y: x % y, "remainder.Tensor", nonzero),
        ("operator-scalar", lambda x: x % 3, "remainder.Scalar", one_tensor()),
        ("operator-reflected", lambda x, y: 7 % y, "remainder.Scalar_Tensor", nonzero),
    ])(dtype, device, quick)


SPECS = [
    OpSpec(
        name="remainder", family="pointwise",
        impls={"remainder.Tensor": remainder, "remainder.Scalar": remainder, "remainder.Scalar_Tensor": remainder,
               "remainder_.Tensor": remainder_, "remainder_.Scalar": remainder_, "remainder.Tensor_out": remainder_out},
        call=torch.remainder, samples=_samples, dtypes=NUMERIC, perf=pointwise_perf(2, domain=PERF_DIVISOR),
        aten_decisions=ZERO_DIVISION_CHECK,
    ),
]
