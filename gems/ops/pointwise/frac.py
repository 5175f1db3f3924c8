"""frac: x - trunc(x), the fractional part with x's sign (frac(+-inf) is NaN, frac(-2.0) is +0.0, as
ATen's). Floating dtypes only: ATen refuses integers and bool (NotImplementedError), which the op does not
declare, so ATen runs and raises. fp16/bf16 are computed in fp32 (exact).
"""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS
from gems.ops.pointwise.shared import edge_samples
from gems.ops.pointwise.unary_shared import unary_spec


@triton.jit
def _frac(x):
    return x - libdevice.trunc(x)


frac_op = PointwiseOp("frac", _frac, operands=1, dtypes=FLOATS)

SPECS = [
    unary_spec(frac_op, torch.frac, dtypes=FLOATS, rejects=(torch.int64, torch.bool),
               domain=dict(low=-50.0, high=50.0),
               more=(edge_samples("exact_half_samples", torch.frac, expects="frac"),)),
]
