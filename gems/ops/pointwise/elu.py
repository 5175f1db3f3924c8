"""elu(alpha=1, scale=1, input_scale=1): ``x > 0 ? x * scale : expm1(x * input_scale) * alpha * scale``
(ATen's CUDA formula, libdevice's expm1; the coefficients in fp32 for fp16/bf16/fp32, fp64 for fp64).
Floating dtypes only. Its backward is elu_backward. selu and selu_ (CompositeImplicitAutograd) run elu and
elu_ with SELU's constants; celu has its own declaration (celu.py).
"""

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS
from gems.ops.pointwise.unary_shared import alias_calls, scalar_variants, unary_spec


@triton.jit
def _elu(x, alpha, scale, input_scale):
    return tl.where(x > 0, x * scale, libdevice.expm1(x * input_scale) * (alpha * scale))


elu_op = PointwiseOp("elu", _elu, operands=1, scalars=("alpha", "scale", "input_scale"), dtypes=FLOATS)


def elu(self, alpha=1, scale=1, input_scale=1):
    return elu_op(self, float(alpha), float(scale), float(input_scale))


def elu_(self, alpha=1, scale=1, input_scale=1):
    return elu_op(self, float(alpha), float(scale), float(input_scale), out=self, inplace=True)


def elu_out(self, alpha=1, scale=1, input_scale=1, *, out):
    return elu_op(self, float(alpha), float(scale), float(input_scale), out=out)


SPECS = [
    unary_spec(
        elu_op, torch._C._nn.elu, inplace=torch._C._nn.elu_, dtypes=FLOATS,
        rejects=(torch.int64, torch.bool), grad_expects=("elu", "elu_backward"),
        impls={"elu": elu, "elu_": elu_, "elu.out": elu_out},
        more=(scalar_variants(("alpha", {"alpha": 0.4}), ("negative-alpha", {"alpha": -1.5}), grad=True),
              scalar_variants(("scales", {"alpha": 0.5, "scale": 2.0, "input_scale": 0.25}),
                              expects="elu"),
              alias_calls(("selu", torch.selu, "elu"), ("selu-inplace", torch.selu_, "elu_"),
                          ("selu-functional", torch.nn.functional.selu, "elu")))),
]
