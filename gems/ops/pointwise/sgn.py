"""sgn: sign of a real tensor (ATen's sgn runs sign's kernel for every real dtype; complex tensors, z / |z|,
fall back to ATen). abs's derivative calls it.
"""

import torch
import triton  # noqa: F401
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)

from gems.codegen.pointwise import PointwiseOp
from gems.ops.pointwise.sign import signum
from gems.ops.pointwise.unary_shared import unary_spec

sgn_op = PointwiseOp("sgn", signum, operands=1)

SPECS = [unary_spec(sgn_op, torch.sgn)]
