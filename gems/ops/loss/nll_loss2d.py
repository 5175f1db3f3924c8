"""nll_loss2d: ``nll_loss2d_forward`` and ``nll_loss2d_backward`` (what F.nll_loss and F.cross_entropy
reach for inputs of 3 or more dims: ``nll_loss_nd``, composite, reshapes them to (N, C, H, W)).

The kernels are nll_loss's (gems/ops/loss/nll_loss.py) on the (N, C, S = H*W) view of the input and
the (N, S) view of the target, taken through their strides when H and W merge (a copy otherwise).
"""

from __future__ import annotations

import torch

from gems.dtypes import FLOATS
from gems.ops.loss.nll_loss import (
    CUDA_ASSERTS,
    WEIGHT_SUM_ORDER,
    check_reduction,
    check_weight,
    nll_backward,
    nll_forward,
)
from gems.spec import OpSpec, lazy


def _merged(t, h_dim):
    """(tensor, stride of the merged H*W dim): H and W of ``t`` taken as one dim (a copy when they do not
    merge)."""
    h, w = t.shape[h_dim], t.shape[h_dim + 1]
    sh, sw = t.stride(h_dim), t.stride(h_dim + 1)
    if w == 1:
        return t, sh
    if h == 1 or sh == w * sw:
        return t, sw
    t = t.contiguous()
    return t, t.stride(h_dim + 1)


def _view(self, target):
    """The inputs (possibly copied) and (N, C, S, x strides, target strides), after ATen's checks (the
    target's dimensions first)."""
    if target.dim() != 3:
        raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but got targets of dimension: "
                           f"{target.dim()}")
    if self.dim() != 4:
        raise RuntimeError(f"only batches of spatial inputs supported (4D tensors), but got input of dimension: "
                           f"{self.dim()}")
    n, c, h, w = self.shape
    if target.shape != (n, h, w):
        raise RuntimeError(f"size mismatch (got input: {list(self.shape)} , target: {list(target.shape)}")
    self, sxs = _merged(self, 2)
    target, sts = _merged(target, 1)
    return self, target, (n, c, h * w, (self.stride(0), self.stride(1), sxs), (target.stride(0), sts))


def nll_loss2d_forward(self, target, weight, reduction, ignore_index):
    check_reduction(reduction)
    self, target, view = _view(self, target)
    check_weight(weight, self, view[1])
    n, _, h, w = self.shape
    return nll_forward(self, target, weight, reduction, ignore_index, view, reduction == 0, (n, h, w))


def nll_loss2d_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    check_reduction(reduction)
    x, target, view = _view(self, target)
    check_weight(weight, x, view[1])
    g_strides = None
    if reduction == 0:
        n, _, h, w = self.shape
        if grad_output.dim() != 3:
            raise RuntimeError(f"grad_output must have same dimension as target (3) but got dimension: "
                               f"{list(grad_output.shape)}")
        if grad_output.shape != (n, h, w):
            raise RuntimeError(f"size mismatch (got grad_output: {list(grad_output.shape)} target: {[n, h, w]}")
        grad_output, gs = _merged(grad_output, 1)
        g_strides = (grad_output.stride(0), gs)
    elif grad_output.numel() != 1:
        raise RuntimeError(f"Expected a single element grad_output tensor, but got: {list(grad_output.shape)}")
    return nll_backward(grad_output, x, target, weight, reduction, ignore_index, total_weight, view, g_strides)


SPECS = [
    OpSpec(
        name="nll_loss2d", family="loss",
        impls={"nll_loss2d_forward": nll_loss2d_forward, "nll_loss2d_backward": nll_loss2d_backward},
        call=torch.nn.functional.nll_loss,
        samples=lazy("gems.testing.samples_loss", "nll_loss_samples", spatial=True),
        dtypes=FLOATS,
        tolerance="reduction",
        skips=CUDA_ASSERTS,
        known_failures={("nvidia", "*", "error-backward-grad-not-scalar"): "H200, 2026-11-26: ATen's CUDA "
                        "nll_loss2d_backward takes a grad_output of 2 elements for a reduced loss without an error; "
                        "its CPU kernel raises 'Expected a single element grad_output tensor', and so does gems"},
        varies_between_runs=WEIGHT_SUM_ORDER,
    ),
]
