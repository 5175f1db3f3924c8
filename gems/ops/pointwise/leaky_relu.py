"""leaky_relu(negative_slope=0.01): x where x > 0, else x * negative_slope (the slope in fp32 for
fp16/bf16/fp32, fp64 for fp64, as ATen's CUDA kernel). Floating dtypes only. Its backward is
leaky_relu_backward.
"""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS
from gems.ops.pointwise.unary_shared import scalar_variants, unary_spec


@triton.jit
def _leaky_relu(x, negative_slope):
    return tl.where(x > 0, x, x * negative_slope)


leaky_relu_op = PointwiseOp("leaky_relu", _leaky_relu, operands=1, scalars=("negative_slope",), dtypes=FLOATS)


def leaky_relu(self, negative_slope=0.01):
    return leaky_relu_op(self, float(negative_slope))


def leaky_relu_(self, negative_slope=0.01):
    return leaky_relu_op(self, float(negative_slope), out=self, inplace=True)


def leaky_relu_out(self, negative_slope=0.01, *, out):
    return leaky_relu_op(self, float(negative_slope), out=out)


SPECS = [
    unary_spec(
        leaky_relu_op, torch._C._nn.leaky_relu, inplace=torch._C._nn.leaky_relu_, dtypes=FLOATS,
        rejects=(torch.int64, torch.bool), grad_expects=("leaky_relu", "leaky_relu_backward"),
        impls={"leaky_relu": leaky_relu, "leaky_relu_": leaky_relu_, "leaky_relu.out": leaky_relu_out},
        more=(scalar_variants(("slope", {"negative_slope": 0.2}), ("negative-slope", {"negative_slope": -1.5}),
                              grad=True),)),
]
