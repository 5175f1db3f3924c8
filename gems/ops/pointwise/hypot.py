"""hypot (in-place, out=): sqrt(x^2 + y^2) without overflow or underflow in the intermediate, libdevice's
hypot in fp32 for fp16/bf16. Floating dtypes only: ATen refuses integer and bool inputs
(NotImplementedError)."""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS
from gems.ops.pointwise.shared import binary_samples, combined, inplace_of, out_of, pointwise_perf
from gems.spec import OpSpec, lazy


@triton.jit
def _hypot(x, y):
    return libdevice.hypot(x, y)


hypot_op = PointwiseOp("hypot", _hypot, operands=2, dtypes=FLOATS)

SPECS = [
    OpSpec(
        name="hypot", family="pointwise",
        impls={"hypot": hypot_op, "hypot_": inplace_of(hypot_op), "hypot.out": out_of(hypot_op)},
        call=torch.hypot,
        samples=combined(binary_samples(torch.hypot, out="hypot.out", inplace=("hypot_", torch.Tensor.hypot_),
                                        grad=True, scalar=None, float_scalar=False),
                         lazy("gems.testing.samples_pwbinary", "integer_input_error_samples", torch.hypot)),
        dtypes=FLOATS, perf=pointwise_perf(2),
    ),
]
