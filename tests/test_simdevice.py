"""The simulated accelerator (gems.simdevice) and the sim vendor: an out-of-tree PrivateUse1 device on CPU.

Each check runs in a fresh process: PrivateUse1 is renamed once per process, and the vendor is fixed
once kernels are defined, while this test process runs the interpreter vendor.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.xdist_group("simdevice")  # one worker builds/loads the extension for all


def _python(code: str, vendor: str | None = None, timeout: int = 600, **env_extra) -> dict:
    """Run ``code`` in a fresh interpreter; it prints one JSON line last, which is returned."""
    env = {k: v for k, v in os.environ.items() if k != "GEMS_VENDOR" and not k.startswith("PYTEST_")}
    env.update(PYTHONPATH=str(REPO), **env_extra)
    if vendor:
        env["GEMS_VENDOR"] = vendor
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, f"exit {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


DEVICE_PROBE = r"""
import json, torch
from gems import simdevice
simdevice.load()
out = {}
x = torch.arange(12, dtype=torch.float32).reshape(3, 4).to("sim")
out["device"] = str(x.device)
out["accelerator"] = str(torch.accelerator.current_accelerator())
# Views share memory: a write through any of them is seen by the base (no copying fallback).
x.t()[1, 2] = -1.0               # transpose + select + copy_
x.unsqueeze(0).expand(2, 3, 4)[1, 0, 3] = 99.0
x.view(12)[11] = 55.0
out["values"] = x.cpu().tolist()
out["item"] = x[2, 1].item()
out["storage_shared"] = x.t().untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
# Data creation and printing take the explicit CPU route, counted.
simdevice.reset_route_counts()
z = torch.zeros(2, 3, device="sim")
r = torch.rand(5, device="sim")
text = repr(z)
out["repr"] = text
out["routes"] = simdevice.cpu_route_counts()
out["rand_in_range"] = bool(((r.cpu() >= 0) & (r.cpu() < 1)).all())
# Anything else is refused, naming the operator and the device.
errors = {}
for name, call in {"sin": lambda: torch.sin(z), "add": lambda: z + z, "sum": lambda: z.sum(),
                   "mm": lambda: z @ z.t()}.items():
    try:
        call()
        errors[name] = None
    except NotImplementedError as exc:
        errors[name] = str(exc)
out["errors"] = errors
# One stream, no events: a timer must use the wall clock here.
torch.accelerator.synchronize()
torch.sim.synchronize()
try:
    torch.Event(device="sim", enable_timing=True).record()
    out["events"] = True
except RuntimeError:
    out["events"] = False
print(json.dumps(out))
"""


def test_device_holds_views_copies_and_refuses_everything_else():
    found = _python(DEVICE_PROBE)
    assert found["device"] == "sim:0" and found["accelerator"] == "sim"
    assert found["values"] == [[0.0, 1.0, 2.0, 99.0], [4.0, 5.0, 6.0, 7.0], [8.0, -1.0, 10.0, 55.0]]
    assert found["item"] == -1.0 and found["storage_shared"]
    assert found["repr"] == "tensor([[0., 0., 0.],\n        [0., 0., 0.]], device='sim:0')"
    assert found["routes"] == {"zero_": 1, "uniform_": 1, "print": 1}
    assert found["rand_in_range"]
    for name, op in (("sin", "aten::sin.out"), ("add", "aten::add.out"), ("sum", "aten::sum"),
                     ("mm", "aten::mm")):
        message = found["errors"][name]
        assert message and op in message and "'sim'" in message, (name, message)
    assert found["events"] is False


GEMS_PROBE = r"""
import json, torch, gems
from gems.perf import timing
gems.enable()
out = {"vendor": gems.vendor().name, "key": gems.vendor().dispatch_key}
x = torch.tensor([-2.0, -0.5, 0.0, 1.5, -0.0]).to("sim")
gems.reset_counts()
y = torch.abs(x)
out["abs"] = y.cpu().tolist()
out["abs_device"] = str(y.device)
out["counts"] = gems.call_counts()["gems"]
try:
    torch.special.bessel_j0(x)  # served neither by gems nor by the device
    out["unserved"] = None
except NotImplementedError as exc:
    out["unserved"] = str(exc)
out["timer"] = timing.make_timer("sim", timing.plan_for("sim", True)).name
out["sync_is_accelerator"] = timing.synchronizer("sim") is torch.accelerator.synchronize
print(json.dumps(out))
"""


def test_gems_kernels_run_on_the_simulated_device():
    found = _python(GEMS_PROBE, vendor="sim")
    assert found["vendor"] == "sim" and found["key"] == "PrivateUse1"
    assert found["abs"] == [2.0, 0.5, 0.0, 1.5, 0.0]
    assert found["abs_device"] == "sim:0"
    assert found["counts"] == {"abs": 1}
    assert "aten::special_bessel_j0" in found["unserved"] and "'sim'" in found["unserved"]
    assert found["timer"] == "wall-clock" and found["sync_is_accelerator"]


TABLE_UPLOAD_PROBE = r"""
import json, torch, gems
from gems import native
from gems.runtime import device_tables
gems.enable()
torch.manual_seed(0)
xs = [torch.randn(3, 4 + i % 3) for i in range(24)]  # more values than kernel arguments: they are table words
on_sim = [x.to("sim") for x in xs]
native.reset_counts(); gems.reset_counts(); device_tables.reset_counts()
agree = True
for step in range(4):  # new values each call: a new table each call, uploaded to the device
    scalars = [1.0 + step / 4 + i / 32 for i in range(len(xs))]
    torch._foreach_mul_(on_sim, scalars)
    with gems.aten_only():  # ATen's answer, and the device's copy back (gems' _to_copy would refuse the transfer)
        torch._foreach_mul_(xs, scalars)
        agree = agree and all(torch.equal(a.cpu(), b) for a, b in zip(on_sim, xs))
out = {"agree": agree, "replays": native.call_counts(), "python": native.python_calls(),
       "fallbacks": [o for o, _ in gems.call_counts()["fallback"]], "uploads": device_tables.counts()["uploads"]}
print(json.dumps(out))
"""


def test_list_plans_upload_their_tables_to_the_device_without_gems_copy_kernels():
    # A table upload is a transfer, ATen's copy's work: through gems' _to_copy and copy_ (registered at the
    # device's key) it took the Python path every time, to be refused there as a transfer (Fallback). On an H200
    # that hop cost 30-50 us per upload (runs/lists_probe.py); the first call's Python path and the native replays
    # now reach ATen's copy directly.
    found = _python(TABLE_UPLOAD_PROBE, vendor="sim")
    assert found["agree"]
    assert found["replays"] == {"_foreach_mul_.ScalarList": 3} and found["uploads"] == 4
    assert found["python"] == {"_foreach_mul_.ScalarList": {"the first call of its signature (recorded)": 1}}
    assert found["fallbacks"] == []


BUILD_FAILURE_PROBE = r"""
import json, pathlib, sys
from gems import simdevice
broken = pathlib.Path(sys.argv[1])
# A syntax error, and no #include: the compiler fails in a fraction of a second, not after parsing torch's headers.
broken.write_text("int main( { return 0; }\n")
simdevice.SOURCE = broken
try:
    simdevice.load()
    print(json.dumps({"error": None}))
except simdevice.SimDeviceBuildError as exc:
    print(json.dumps({"error": str(exc)}))
"""


def test_a_failed_build_names_the_log_and_the_cause(tmp_path):
    code = BUILD_FAILURE_PROBE.replace("sys.argv[1]", repr(str(tmp_path / "broken.cpp")))
    found = _python(code, GEMS_SIMDEVICE_BUILD_DIR=str(tmp_path / "build"))
    message = found["error"]
    log = tmp_path / "build" / "build.log"
    assert message and f"build log: {log}" in message
    assert "cause:" in message and "error:" in message.split("cause:")[1]  # the compiler's first error line
    assert "error:" in log.read_text()


# A harness bug of the kind this device exists to catch: "not the CPU, so CUDA".
CUDA_ONLY_PROBE = r"""
import json, torch, gems
from gems.perf import runner, timing
timing.synchronizer = lambda device: (lambda: None) if device == "cpu" else torch.cuda.synchronize
backend = gems.vendor()
specs = runner.select_specs("abs")
book = runner.shapes.load(None)
run = runner.measure(specs, book, "quick", backend, progress=False)
print(json.dumps({"statuses": sorted({r["status"] for r in run.rows}),
                  "reasons": sorted({r["reason"][:120] for r in run.rows if r["status"] != "ok"})}))
"""


def test_a_cuda_only_call_in_the_harness_fails_the_sim_pipeline_only():
    on_cpu = _python(CUDA_ONLY_PROBE, vendor="interpreter")
    assert on_cpu["statuses"] == ["ok"]  # the CPU interpreter pipeline cannot see the bug
    on_sim = _python(CUDA_ONLY_PROBE, vendor="sim")
    assert "error" in on_sim["statuses"], on_sim
    assert any("CUDA" in reason for reason in on_sim["reasons"]), on_sim


def test_scaffold_on_sim_makes_an_out_of_tree_vendor():
    from gems.scaffold import core as sc

    backend_dir, root = sc.locate()
    plan = sc.plan("acme", base="sim", device_name="acme", dispatch_key="PrivateUse1", backend_dir=backend_dir,
                   root=root)
    assert (plan.base, plan.device_name, plan.dispatch_key) == ("sim", "acme", "PrivateUse1")
    init = plan.targets[0].files["__init__.py"]
    assert 'base_vendor = "sim"' in init and 'device_name="acme"' in init
    assert sc.BUILTIN_VENDORS.count("sim") == 1  # never replaced by a scaffold
