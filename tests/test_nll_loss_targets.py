"""nll_loss's out-of-range targets: on the CPU interpreter gems raises ATen's CPU error after reading the
kernels' flags; on CUDA it asserts on the device as ATen's CUDA kernels do, so a training step never waits
for its loss (checked with CUDA's sync debug mode, which raises at any host synchronization). Either way the
call only allocates and launches, so the native layer replays its warm calls (on the interpreter the replay
reads the flags again, and a failed check sends the call to the Python path, which raises). The CUDA tests
skip without a GPU and run on the lead's GPU machine."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch

import gems
from gems import native
from gems.native import record
from gems.runtime import registration

F = torch.nn.functional
CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device (the lead's GPU run)")
# CPU tensors reach gems only under the interpreter vendor: with GEMS_VENDOR=nvidia (the GPU run) ATen would serve
# these calls, and the tests of gems' replays failed there (or passed on ATen's error, proving nothing).
INTERPRETER = pytest.mark.skipif(os.environ.get("GEMS_VENDOR", "interpreter") != "interpreter",
                                 reason="runs gems on CPU tensors: the interpreter vendor's")


@pytest.fixture(autouse=True)
def _restore_registration():
    previous = registration.snapshot()
    yield
    registration.apply(previous, gems.vendor().dispatch_key)


@INTERPRETER
def test_an_out_of_range_target_raises_atens_cpu_error_on_the_interpreter():
    x = torch.randn(6, 5, requires_grad=True)
    gems.enable()
    with pytest.raises(IndexError, match="Target 9 is out of bounds"):
        F.cross_entropy(x, torch.tensor([0, 1, 9, 2, 3, 4]))


def _loss_and_grad(x, target, **kwargs):
    x = x.detach().requires_grad_()
    loss = F.cross_entropy(x, target, **kwargs)
    loss.backward(torch.ones_like(loss))
    return loss.detach(), x.grad


@INTERPRETER
@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_warm_calls_replay_natively_on_the_interpreter(reduction):
    """No ATen op inside the call (the flags need no fill; reduction="none"'s total weight is written by the
    kernel): the forward and the backward record a plan, and warm calls replay it, with ATen's values."""
    gems.enable()
    native.invalidate()
    gems.reset_counts()
    for _ in range(3):
        x, target = torch.randn(6, 5), torch.tensor([0, 4, -100, 2, 3, 1])
        got = _loss_and_grad(x, target, reduction=reduction)
        with gems.aten_only():
            want = _loss_and_grad(x, target, reduction=reduction)
        torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6)
    replayed = native.call_counts()
    assert replayed.get("nll_loss_forward") == 2 and replayed.get("nll_loss_backward") == 2, replayed


@INTERPRETER
def test_a_warm_call_with_an_out_of_range_target_still_raises():
    """The replay reads the kernels' flags again: a bad target sends the call to the Python path, which raises."""
    gems.enable()
    native.invalidate()
    native.reset_counts()
    for _ in range(2):
        F.nll_loss(torch.randn(6, 5), torch.tensor([0, 1, 4, 2, 3, 4]))
    assert native.calls_of("nll_loss_forward") == 1
    with pytest.raises(IndexError, match="Target 7 is out of bounds"):
        F.nll_loss(torch.randn(6, 5), torch.tensor([0, 1, 7, 2, 3, 4]))
    assert native.calls_of("nll_loss_forward") == 1  # the replay that failed its check is not counted
    assert native.python_reasons()["nll_loss_forward"].startswith("a value check of its replay failed")
    x, target = torch.randn(6, 5), torch.tensor([0, 1, 4, 2, 3, 4])
    loss = F.nll_loss(x, target)  # the plan serves good targets again
    assert native.calls_of("nll_loss_forward") == 2
    with gems.aten_only():
        torch.testing.assert_close(loss, F.nll_loss(x, target))


@INTERPRETER
def test_host_checked_calls_keep_exact_plans_at_new_sizes():
    """A size-generic plan would need formulas for the flags' sizes too: calls reading flags keep exact plans."""
    gems.enable()
    native.invalidate()
    for rows in (6, 7):
        F.nll_loss(torch.randn(rows, 5), torch.randint(0, 5, (rows,)))
    assert native.python_reasons()["nll_loss_forward"] == (
        "a new size of a family with no size-generic plan: it reads flags on the host (interpreted kernels' checks): "
        "exact plans only")
    assert native.generic_plan_counts().get("nll_loss_forward", 0) == 0


def test_flags_clear_reads_nothing_in_a_dry_run():
    flags = torch.zeros(3, dtype=torch.int32)
    assert not record.flags_clear(flags)
    with record.Recording((), "python", dry=True) as recording:
        assert record.flags_clear(flags)  # the dry run's kernels did not run: nothing to read
    assert recording.checks == [flags]


@CUDA
def test_cuda_warm_calls_replay_natively():
    gems.enable()
    native.invalidate()
    gems.reset_counts()
    x = torch.randn(64, 1000, device="cuda", requires_grad=True)
    target = torch.randint(0, 1000, (64,), device="cuda")
    for _ in range(3):
        F.cross_entropy(x, target).backward()
    replayed = native.call_counts()
    assert replayed.get("nll_loss_forward") == 2 and replayed.get("nll_loss_backward") == 2, replayed


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
