"""mse_loss: ``mse_loss`` and ``mse_loss_backward`` (F.mse_loss and its autograd).

    loss = (x - y)^2, then none / mean / sum            (gems/ops/loss/pointwise_loss.py)
    dx   = norm * (x - y) * grad,  norm = 2 / x.numel() for mean, else 2

Inputs broadcast and promote as in ATen's TensorIterator.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl  # noqa: F401 (a jit function's module must hold triton.language)

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS
from gems.ops.loss.pointwise_loss import LOSS_SQUARED_ERROR, PointwiseLoss, squared_error
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, PerfSpec, lazy


@triton.jit
def _mse_backward(x, y, g, norm):
    return norm * (x - y) * g


_mse = PointwiseLoss("mse_loss", squared_error, LOSS_SQUARED_ERROR)
_mse_backward_op = PointwiseOp("mse_loss_backward", _mse_backward, operands=3, scalars=("norm",), dtypes=FLOATS,
                               round_scalars=False)


def mse_loss(self, target, reduction=1):
    return _mse(self, target, reduction)


def mse_loss_backward(grad_output, self, target, reduction):
    if reduction not in (0, 1, 2):
        raise Fallback(f"mse_loss_backward with reduction {reduction} is left to ATen")
    norm = 2.0 / self.numel() if reduction == 1 and self.numel() else 2.0
    return _mse_backward_op(self, target, grad_output, norm)


SPECS = [
    OpSpec(
        name="mse_loss", family="loss",
        impls={"mse_loss": mse_loss, "mse_loss_backward": mse_loss_backward},
        call=torch.nn.functional.mse_loss,
        samples=lazy("gems.testing.samples_loss", "pointwise_loss_samples", "mse_loss", "mse_loss_backward"),
        dtypes=FLOATS,
        tolerance="reduction",
        perf=PerfSpec(inputs=lazy("gems.testing.samples_loss", "pointwise_loss_perf_inputs"), shapes="loss",
                      bytes=lazy("gems.testing.samples_loss", "inputs_read_bytes")),
    ),
]
