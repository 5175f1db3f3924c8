"""_safe_softmax: softmax that gives 0 instead of NaN on rows that are entirely -inf (what
scaled_dot_product_attention uses for fully masked rows). Its autograd is softmax's
(``_softmax_backward_data``), served by gems/ops/reduction/softmax.py.

    y = 0 where every x of the row is -inf, else exp(x - max(x)) / sum(exp(x - max(x)))

``dtype=``: the input is converted to it first, as ATen does. A wider dtype converts exactly, so the
kernel reads the input as it is and writes the wider result (one pass); a narrower one is a rounding
ATen makes before the softmax, so the input is converted first (a copy, as in ATen).
"""

from __future__ import annotations

import torch

from gems.dtypes import FLOATS
from gems.ops.reduction.softmax import PERF, SAFE_SOFTMAX, forward
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, lazy

_RANK = {torch.float16: 0, torch.bfloat16: 0, torch.float32: 1, torch.float64: 2}


def safe_softmax(self, dim, dtype=None):
    if dtype is None or dtype == self.dtype:
        return forward(self, dim, self.dtype, SAFE_SOFTMAX)
    if self.dtype not in FLOATS or dtype not in FLOATS:
        raise Fallback(f"_safe_softmax of {self.dtype} to {dtype} is not handled by gems")
    if _RANK[dtype] <= _RANK[self.dtype]:
        self = self.to(dtype)
    return forward(self, dim, dtype, SAFE_SOFTMAX)


SPECS = [
    OpSpec(
        name="safe_softmax", family="normalization",
        impls={"_safe_softmax": safe_softmax},
        call=torch._safe_softmax,
        samples=lazy("gems.testing.samples_softmax", "safe_softmax_samples"),
        dtypes=FLOATS,
        tolerance="reduction",
        perf=PERF,
    ),
]
