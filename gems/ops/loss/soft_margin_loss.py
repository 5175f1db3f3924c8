"""soft_margin_loss: ``soft_margin_loss`` and ``soft_margin_loss_backward`` (F.soft_margin_loss and its
autograd; ATen's are CompositeExplicitAutograd, several kernels each, which these replace).

    loss = log1p(exp(-y x)), then none / mean / sum      (gems/ops/loss/pointwise_loss.py)
    dx   = -norm * y * z / (1 + z) * grad,  z = exp(-y x),  norm = 1 / x.numel() for mean, else 1

ATen writes the loss into a tensor shaped and typed like the input, so a target that broadcasts
the input to a larger shape, or promotes it, is left to ATen (which raises or converts).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl  # noqa: F401 (a jit function's module must hold triton.language)
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS
from gems.ops.loss.pointwise_loss import LOSS_SOFT_MARGIN, PointwiseLoss, soft_margin
from gems.ops.pointwise.shared import div_rn
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, PerfSpec, lazy


@triton.jit
def _soft_margin_backward(x, y, g, norm):
    z = libdevice.exp(-y * x)
    return div_rn(-norm * y * z, 1 + z) * g


_soft_margin = PointwiseLoss("soft_margin_loss", soft_margin, LOSS_SOFT_MARGIN)
_backward_op = PointwiseOp("soft_margin_loss_backward", _soft_margin_backward, operands=3, scalars=("norm",),
                           dtypes=FLOATS, round_scalars=False)


def _check_like_input(x, *others):
    for t in others:
        if t.dtype != x.dtype or torch.broadcast_shapes(x.shape, t.shape) != x.shape:
            raise Fallback("soft_margin_loss with operands that promote or broadcast the input is left to ATen")


def soft_margin_loss(self, target, reduction=1):
    _check_like_input(self, target)
    return _soft_margin(self, target, reduction)


def soft_margin_loss_backward(grad_output, self, target, reduction):
    _check_like_input(self, target, grad_output)
    if reduction not in (0, 1, 2):
        raise Fallback(f"soft_margin_loss_backward with reduction {reduction} is left to ATen")
    norm = 1.0 / self.numel() if reduction == 1 and self.numel() else 1.0
    return _backward_op(self, target, grad_output, norm)


SPECS = [
    OpSpec(
        name="soft_margin_loss", family="loss",
        impls={"soft_margin_loss": soft_margin_loss, "soft_margin_loss_backward": soft_margin_loss_backward},
        call=torch.nn.functional.soft_margin_loss,
        samples=lazy("gems.testing.samples_loss", "pointwise_loss_samples", "soft_margin_loss",
                     "soft_margin_loss_backward", target_domain={"low": -1.0, "high": 1.0}),
        dtypes=FLOATS,
        tolerance="reduction",
        perf=PerfSpec(inputs=lazy("gems.testing.samples_loss", "pointwise_loss_perf_inputs"), shapes="loss",
                      bytes=lazy("gems.testing.samples_loss", "inputs_read_bytes")),
    ),
]
