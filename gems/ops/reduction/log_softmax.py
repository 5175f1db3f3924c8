"""log_softmax: ``_log_softmax`` and ``_log_softmax_backward_data`` (what torch.log_softmax,
F.log_softmax, F.cross_entropy and their autograd reach; ``log_softmax.int`` is composite).

    y  = x - max(x) - log(sum(exp(x - max(x))))      along dim
    dx = dy - exp(y) * sum(dy)

The kernels are softmax's (gems/ops/reduction/softmax.py, MODE=LOG_SOFTMAX): one read and one write
for rows that fit a block, the online form for longer ones.
"""

from __future__ import annotations

import torch

from gems.dtypes import FLOATS
from gems.ops.reduction.softmax import LOG_SOFTMAX, PERF, backward, check_half_to_float, forward
from gems.spec import OpSpec, lazy


def log_softmax(self, dim, half_to_float):
    if half_to_float:
        check_half_to_float(self, dim, LOG_SOFTMAX)
    return forward(self, dim, torch.float32 if half_to_float else self.dtype, LOG_SOFTMAX)


def log_softmax_backward(grad_output, output, dim, input_dtype):
    return backward(grad_output, output, dim, input_dtype, True)


SPECS = [
    OpSpec(
        name="log_softmax", family="normalization",
        impls={"_log_softmax": log_softmax, "_log_softmax_backward_data": log_softmax_backward},
        call=torch.log_softmax,
        samples=lazy("gems.testing.samples_softmax", "softmax_family_samples", "_log_softmax",
                     "_log_softmax_backward_data", torch.ops.aten._log_softmax.default,
                     torch.ops.aten._log_softmax_backward_data.default),
        dtypes=FLOATS,
        tolerance="reduction",
        perf=PERF,
    ),
]
