"""mul (Tensor, in-place, out=). ATen's mul uses a scalar operand at compute precision, without
rounding it to fp16 first (round_scalars=False)."""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import ALL
from gems.ops.pointwise.shared import binary_samples, combined, edge_samples, inplace_of, out_of, pointwise_perf
from gems.spec import OpSpec


@triton.jit
def _mul(x, y):
    return x * y


mul_op = PointwiseOp("mul", _mul, operands=2, round_scalars=False)

SPECS = [
    OpSpec(
        name="mul", family="pointwise",
        impls={"mul.Tensor": mul_op, "mul_.Tensor": inplace_of(mul_op), "mul.out": out_of(mul_op)},
        call=torch.mul,
        samples=combined(
            binary_samples(torch.mul, out="mul.out", inplace=("mul_.Tensor", lambda x, y: x.mul_(y)), grad=True),
            edge_samples("integer_extreme_samples", torch.mul, operands=2, expects="mul.Tensor"),
            edge_samples("subnormal_intermediate_samples", torch.mul, expects="mul.Tensor")),
        dtypes=ALL, perf=pointwise_perf(2),
    ),
]
