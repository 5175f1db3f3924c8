"""Losses that ATen marks CompositeImplicitAutograd run as their decomposition, so gems registers no
kernel of their own: these tests check that the decomposition reaches gems kernels and agrees with a
float64 CPU reference (interpreter vendor). margin_ranking_loss has no OpSpec: an OpSpec needs at least
one overload of its own, and every overload its decomposition runs is declared by another operator."""

import pytest
import torch

import gems
from gems.runtime import registration

F = torch.nn.functional


@pytest.fixture(autouse=True)
def _restore_registration():
    previous = registration.snapshot()
    yield
    registration.apply(previous, gems.vendor().dispatch_key)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_margin_ranking_loss_runs_gems_kernels(reduction, dtype):
    torch.manual_seed(0)
    a, b = torch.randn(13, 17, dtype=dtype), torch.randn(13, 17, dtype=dtype)
    target = torch.randint(0, 2, (13, 17)).to(dtype) * 2 - 1
    a.requires_grad_()
    want = F.margin_ranking_loss(a.detach().double(), b.double(), target.double(), margin=0.25, reduction=reduction)
    gems.enable()
    gems.reset_counts()
    got = F.margin_ranking_loss(a, b, target, margin=0.25, reduction=reduction)
    got.sum().backward()
    served = gems.call_counts()["gems"]
    gems.disable()
    assert {"sub.Tensor", "mul.Tensor", "clamp_min_"} <= set(served), served
    tol = 1e-5 if dtype == torch.float32 else 2e-3
    torch.testing.assert_close(got.double(), want, rtol=tol, atol=tol)
    assert a.grad is not None and a.grad.shape == a.shape
