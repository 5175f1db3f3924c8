"""mul (Tensor and Scalar, in-place, out=). ATen's mul uses a scalar operand at compute precision, without
rounding it to fp16 first (round_scalars=False). mul.Scalar, which autograd formulas and optimizers reach
from C++ (``grad * 2.0``), computes what mul.Tensor computes with a wrapped number; its out= form
(mul.Scalar_out) is ATen's generated wrapper around mul.Scalar."""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import ALL
from gems.ops.pointwise.shared import binary_samples, combined, edge_samples, inplace_of, out_of, pointwise_perf
from gems.spec import OpSpec, lazy


@triton.jit
def _mul(x, y):
    return x * y


mul_op = PointwiseOp("mul", _mul, operands=2, round_scalars=False)


def _backward_samples(dtype, device, quick):
    """mul.Scalar where autograd calls it: pow's derivative is grad * (3 * x ** 2), a C++ Scalar times a Tensor."""
    from gems.spec import Sample
    from gems.testing.samples import make_tensor, shape_for

    if not dtype.is_floating_point:
        return []
    return [Sample("backward-scalar", lambda: (make_tensor(shape_for(quick), dtype, device).requires_grad_(),),
                   call=lambda x: x**3, grad=True, expects="mul.Scalar")]


SPECS = [
    OpSpec(
        name="mul", family="pointwise",
        impls={"mul.Tensor": mul_op, "mul_.Tensor": inplace_of(mul_op), "mul.out": out_of(mul_op),
               "mul.Scalar": mul_op, "mul_.Scalar": inplace_of(mul_op)},
        call=torch.mul,
        samples=combined(
            binary_samples(torch.mul, out="mul.out", inplace=("mul_.Tensor", lambda x, y: x.mul_(y)), grad=True,
                           scalar_overload=("mul.Scalar", torch.ops.aten.mul.Scalar)),
            lazy("gems.testing.samples_pwbinary", "scalar_overload_samples", torch.ops.aten.mul.Scalar,
                 torch.ops.aten.mul_.Scalar, "mul"),
            _backward_samples,
            edge_samples("integer_extreme_samples", torch.mul, operands=2, expects="mul.Tensor"),
            edge_samples("subnormal_intermediate_samples", torch.mul, expects="mul.Tensor")),
        dtypes=ALL, perf=pointwise_perf(2),
    ),
]
