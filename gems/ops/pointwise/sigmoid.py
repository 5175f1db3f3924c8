"""sigmoid: 1 / (1 + exp(-x)), with libdevice's exp and a correctly rounded division (see exp.py).
Integers and bool give the default float dtype. Its backward is sigmoid_backward."""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp, Promotion, unary_overloads
from gems.dtypes import ALL
from gems.ops.pointwise.shared import div_rn, pointwise_perf, unary_samples
from gems.spec import OpSpec


@triton.jit
def _sigmoid(x):
    return div_rn(1.0, 1.0 + libdevice.exp(-x))


sigmoid_op = PointwiseOp("sigmoid", _sigmoid, operands=1, promotion=Promotion.INT_TO_FLOAT)

SPECS = [
    OpSpec(
        name="sigmoid", family="pointwise", impls=unary_overloads(sigmoid_op, "sigmoid"),
        call=torch.sigmoid,
        samples=unary_samples(out="sigmoid.out", inplace=("sigmoid_", torch.sigmoid_), grad=True,
                              grad_expects=("sigmoid", "sigmoid_backward")),
        dtypes=ALL, perf=pointwise_perf(1),
    ),
]
