"""The copies (gems/ops/copy): which kernel each pair of layouts gets, transfers left to the device's own copy,
and copies registered on the CPU while Triton's interpreter, test code and the oracle copy tensors themselves
(interpreter vendor; the simulated device in a fresh process)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import gems
from gems.runtime import registration
from gems.testing import proof

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _restore_registration():
    previous = registration.snapshot()
    yield
    registration.apply(previous, gems.vendor().dispatch_key)


def _kernels(call):
    """The gems kernels ``call()`` launched (name -> launches), and its result."""
    with proof.recording() as record:
        result = call()
    return dict(record.kernels), result


@pytest.mark.parametrize("layout, kernel", [
    ("contiguous", "_copy_flat_kernel"),
    ("both-transposed", "_copy_flat_kernel"),
    ("channels-last-both", "_copy_flat_kernel"),
    ("transposed-source", "_copy_tiled_kernel"),
    ("channels-last-source", "_copy_tiled_kernel"),
    ("strided-source", "_copy_tiled_kernel"),
    ("broadcast-source", "_copy_tiled_kernel"),
])
def test_each_pair_of_layouts_is_one_launch_of_its_kernel(layout, kernel):
    gems.enable(include=["copy_"])
    make = {
        "contiguous": lambda: (torch.empty(13, 17), torch.randn(13, 17)),
        "both-transposed": lambda: (torch.empty(17, 13).t(), torch.randn(17, 13).t()),
        "channels-last-both": lambda: (torch.empty(2, 3, 5, 7).contiguous(memory_format=torch.channels_last),
                                       torch.randn(2, 3, 5, 7).contiguous(memory_format=torch.channels_last)),
        "transposed-source": lambda: (torch.empty(13, 17), torch.randn(17, 13).t()),
        "channels-last-source": lambda: (torch.empty(2, 3, 5, 7),
                                         torch.randn(2, 3, 5, 7).contiguous(memory_format=torch.channels_last)),
        "strided-source": lambda: (torch.empty(13, 17), torch.randn(13, 34)[:, ::2]),
        "broadcast-source": lambda: (torch.empty(13, 17), torch.randn(17)),
    }[layout]
    with gems.aten_only():
        dst, src = make()
    launched, result = _kernels(lambda: dst.copy_(src))
    assert launched == {kernel: 1}
    with gems.aten_only():
        assert torch.equal(result, src.expand(result.shape))


def test_copies_outside_implementations_run_gems_and_the_interpreters_own_copies_run_aten():
    """Registered on the CPU, copy_ serves test code too; the interpreter copies storages around every launch,
    inside a gems implementation (ATen's kernels there), so a copy never re-enters itself."""
    gems.enable(include=["copy_", "clone", "to_copy", "fill"])
    gems.reset_counts()
    x = torch.randn(6, 7)
    y = x.t().contiguous().to(torch.float64)
    y.fill_(2.0)
    z = torch.empty(7, 6).copy_(x.t())
    counts = gems.call_counts()["gems"]
    assert counts.get("clone") == 1 and counts.get("_to_copy") == 1 and counts.get("fill_.Scalar") == 1
    assert counts.get("copy_") == 1  # one: the launches' own storage copies ran ATen's
    with gems.aten_only():
        assert torch.equal(z, x.t()) and bool((y == 2).all())


SIM_PROBE = r"""
import json, torch, gems
from gems import simdevice
gems.enable()
out = {}
host = torch.arange(12, dtype=torch.float32).reshape(3, 4)
x = host.to("sim")                          # a transfer made by ATen (host tensor): the device's _copy_from
gems.reset_counts(); simdevice.reset_route_counts()
y = torch.empty(4, 3, device="sim").copy_(x.t())    # on the device: gems' tiled kernel
h = torch.empty(4, 3).copy_(y)                         # device -> host: copy_ at the device's key, a transfer
back = y.to("cpu", torch.float64)                      # _to_copy with another device: a transfer
y.fill_(7.0); x.zero_()
out["gems"] = gems.call_counts()["gems"]
out["fallback"] = sorted(overload for overload, why in gems.call_counts()["fallback"] if "transfer" in why)
out["routes"] = simdevice.cpu_route_counts()
out["values"] = [h.tolist(), back.tolist(), y.cpu().tolist(), x.cpu().tolist()]
print(json.dumps(out))
"""


@pytest.mark.xdist_group("simdevice")
def test_on_the_simulated_device_copies_compute_there_and_transfers_are_the_devices():
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.update(PYTHONPATH=str(REPO), GEMS_VENDOR="sim")
    proc = subprocess.run([sys.executable, "-c", SIM_PROBE], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    transposed = [[float(4 * c + r) for c in range(3)] for r in range(4)]
    assert found["values"] == [transposed, transposed, [[7.0] * 3] * 4, [[0.0] * 4] * 3]
    assert found["gems"] == {"copy_": 1, "fill_.Scalar": 1, "zero_": 1}
    # Both transfers fell back (copy_ once, _to_copy once); .cpu() of the results went the same way.
    assert {"copy_", "_to_copy"} <= set(found["fallback"])
    assert found["routes"] == {}  # gems served fill_ and zero_: the device's CPU route did not
