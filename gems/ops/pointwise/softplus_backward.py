"""softplus_backward(grad, x, beta, threshold): grad where x * beta > threshold, else grad z / (z + 1) with
z = exp(x * beta): ATen's CUDA formula, with the quotient z / (z + 1) taken first (correctly rounded for fp32
and fp64 results, Triton's approximate fp32 division for fp16/bf16: shared.div_for_storage), where ATen's
grad * z overflows to inf for large gradients whose result is finite."""

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS
from gems.ops.pointwise.shared import backward_samples, combined, div_for_storage, pointwise_perf
from gems.ops.pointwise.unary_shared import backward_overloads_with_numbers
from gems.spec import OpSpec


@triton.jit
def _softplus_backward(grad, x, beta, threshold, COMMON: tl.constexpr):
    scaled = x * beta
    z = libdevice.exp(scaled)
    return tl.where(scaled > threshold, grad, grad * div_for_storage(z, z + 1.0, COMMON))


softplus_backward_op = PointwiseOp("softplus_backward", _softplus_backward, operands=2,
                                   scalars=("beta", "threshold"), dtypes=FLOATS, common_arg=True)


aten = torch.ops.aten

SPECS = [
    OpSpec(
        name="softplus_backward", family="pointwise",
        impls=backward_overloads_with_numbers(softplus_backward_op, "softplus_backward"),
        call=aten.softplus_backward.default,
        samples=combined(
            backward_samples(grad_input=("softplus_backward.grad_input", aten.softplus_backward.grad_input),
                             scalars=(1.0, 20.0), domain=dict(low=-30.0, high=30.0), rejects=(torch.int64,)),
            ("beta-threshold", backward_samples(scalars=(2.0, 5.0), broadcast=False)),
        ),
        dtypes=FLOATS, perf=pointwise_perf(2, scalars=(1.0, 20.0)),
    ),
]
