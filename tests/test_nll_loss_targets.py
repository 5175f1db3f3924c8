"""nll_loss's out-of-range targets: on the CPU interpreter gems raises ATen's CPU error after reading the
kernels' flag; on CUDA it asserts on the device as ATen's CUDA kernels do, so a training step never waits
for its loss (checked with CUDA's sync debug mode, which raises at any host synchronization). The CUDA
tests skip without a GPU and run on the lead's GPU machine."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

import gems
from gems.runtime import registration

F = torch.nn.functional
CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device (the lead's GPU run)")


@pytest.fixture(autouse=True)
def _restore_registration():
    previous = registration.snapshot()
    yield
    registration.apply(previous, gems.vendor().dispatch_key)


def test_an_out_of_range_target_raises_atens_cpu_error_on_the_interpreter():
    x = torch.randn(6, 5, requires_grad=True)
    gems.enable()
    with pytest.raises(IndexError, match="Target 9 is out of bounds"):
        F.cross_entropy(x, torch.tensor([0, 1, 9, 2, 3, 4]))


@CUDA
def test_cuda_loss_and_its_gradient_never_synchronize_the_host():
    torch.manual_seed(0)
    x = torch.randn(64, 1000, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    target = torch.randint(0, 1000, (64,), device="cuda")
    target[5] = -100  # ignore_index
    want = F.cross_entropy(x.float(), target)
    gems.enable()
    gems.reset_counts()
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        loss = F.cross_entropy(x, target)
        loss.backward()
    finally:
        torch.cuda.set_sync_debug_mode("default")
    served = gems.call_counts()["gems"]
    gems.disable()
    assert {"nll_loss_forward", "nll_loss_backward"} <= set(served), served
    torch.testing.assert_close(loss.float(), want, rtol=2e-2, atol=2e-2)


@CUDA
def test_cuda_out_of_range_target_is_a_device_side_assert():
    """A device-side assert ends the process's CUDA context, so it runs in a child process."""
    script = ("import torch, gems; gems.enable(); x = torch.randn(4, 3, device='cuda'); "
              "t = torch.tensor([0, 1, 7, 2], device='cuda'); "
              "torch.nn.functional.nll_loss(x, t); torch.cuda.synchronize()")
    child = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert child.returncode != 0
    assert "device-side assert" in child.stderr, child.stderr[-2000:]
