"""tanh, from libdevice. Integers and bool give the default float dtype. Its backward is tanh_backward."""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp, Promotion, unary_overloads
from gems.dtypes import ALL
from gems.ops.pointwise.shared import pointwise_perf, unary_samples
from gems.spec import OpSpec


@triton.jit
def _tanh(x):
    return libdevice.tanh(x)


tanh_op = PointwiseOp("tanh", _tanh, operands=1, promotion=Promotion.INT_TO_FLOAT)

SPECS = [
    OpSpec(
        name="tanh", family="pointwise", impls=unary_overloads(tanh_op, "tanh"),
        call=torch.tanh,
        samples=unary_samples(out="tanh.out", inplace=("tanh_", torch.tanh_), grad=True,
                              grad_expects=("tanh", "tanh_backward")),
        dtypes=ALL, perf=pointwise_perf(1),
    ),
]
