"""copysign (Tensor and Scalar, in-place, out=): |x| with the sign bit of y (-0.0 and NaN signs count).
Integers and bool are computed and returned as the default float dtype."""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp, Promotion
from gems.dtypes import ALL
from gems.ops.pointwise.shared import binary_samples, inplace_of, out_of, pointwise_perf
from gems.spec import OpSpec


@triton.jit
def _copysign(x, y):
    return libdevice.copysign(x, y)


copysign_op = PointwiseOp("copysign", _copysign, operands=2, promotion=Promotion.INT_TO_FLOAT)


def _samples(dtype, device, quick):
    from gems.testing.samples_extra import alias_samples, one_tensor

    return alias_samples(binary_samples(
        torch.copysign, out="copysign.out", inplace=("copysign_.Tensor", torch.Tensor.copysign_), grad=True,
        scalar=-2.5, scalar_overload=("copysign.Scalar", torch.ops.aten.copysign.Scalar),
        scalar_expects="copysign.Scalar", result="float"), [
        ("scalar-negative-zero", lambda x: torch.copysign(x, -0.0), "copysign.Scalar", one_tensor()),
        ("inplace-scalar", lambda x: x.double().copysign_(-1), "copysign_.Scalar", one_tensor()),
        # copysign.Scalar_out is a CompositeExplicitAutograd wrapper of copysign.out
        ("scalar-out", lambda x: torch.copysign(x, -1, out=torch.empty(0, dtype=torch.float64, device=x.device)),
         "copysign.out", one_tensor()),
    ])(dtype, device, quick)


SPECS = [
    OpSpec(
        name="copysign", family="pointwise",
        impls={"copysign.Tensor": copysign_op, "copysign.Scalar": copysign_op, "copysign.out": out_of(copysign_op),
               "copysign_.Tensor": inplace_of(copysign_op), "copysign_.Scalar": inplace_of(copysign_op)},
        call=torch.copysign, samples=_samples, dtypes=ALL, perf=pointwise_perf(2),
    ),
]
