"""silu: x / (1 + exp(-x)) (floating dtypes only, as ATen), the division correctly rounded for fp32 and fp64
results and Triton's approximate fp32 one for fp16/bf16 (shared.div_for_storage). Its backward is
silu_backward."""

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp, unary_overloads
from gems.dtypes import FLOATS
from gems.ops.pointwise.shared import div_for_storage, pointwise_perf, unary_samples
from gems.spec import OpSpec


@triton.jit
def _silu(x, COMMON: tl.constexpr):
    return div_for_storage(x, 1.0 + libdevice.exp(-x), COMMON)


silu_op = PointwiseOp("silu", _silu, operands=1, dtypes=FLOATS, common_arg=True)


def _silu_out(x):
    return torch._C._nn.silu(x, out=torch.empty(0, dtype=x.dtype, device=x.device))


def _silu_inplace(x):
    return torch.nn.functional.silu(x, inplace=True)


SPECS = [
    OpSpec(
        name="silu", family="pointwise", impls=unary_overloads(silu_op, "silu"),
        call=torch.nn.functional.silu,
        samples=unary_samples(out=("silu.out", _silu_out), inplace=("silu_", _silu_inplace), grad=True,
                              grad_expects=("silu", "silu_backward"), rejects=(torch.int64, torch.bool)),
        dtypes=FLOATS, perf=pointwise_perf(1),
    ),
]
