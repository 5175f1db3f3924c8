"""gems.trace and gems-trace: every ATen overload dispatched on the vendor's device, and who served it."""

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import torch

import gems
from gems import tracing

REPO = Path(__file__).resolve().parents[1]
# An overload no gems release is expected to serve: it must show as "not registered".
UNSERVED = "special_bessel_j0"


def test_trace_lists_gems_fallback_and_unregistered_overloads():
    x = torch.randn(4, 8)
    with gems.use_gems(include=["add", "abs"]), gems.trace() as t:
        torch.add(x, x)
        torch.add(x, x)
        torch.abs(torch.randn(3, dtype=torch.complex64))  # gems' pointwise kernels hand complex to ATen
        torch.special.bessel_j0(x)
    rows = {r["overload"]: r for r in t.summary()}
    assert rows["add.Tensor"]["calls"] == 2 and rows["add.Tensor"]["gems"] == 2
    assert rows["abs"]["fallback"] == 1 and "complex" in rows["abs"]["fallback_reasons"]
    assert rows[UNSERVED]["not registered"] == 1 and rows[UNSERVED]["gems"] == 0
    table = t.table()
    assert f"{UNSERVED}" in table and "not registered" in table and "fallback" in table


def test_trace_ignores_tensors_on_other_devices():
    with gems.trace(device_type="meta") as t:
        torch.add(torch.ones(3), 1)
    assert t.summary() == []


def test_cli_runs_the_script_and_writes_csv_and_json(tmp_path):
    script = tmp_path / "model.py"
    script.write_text("import sys, torch\nx = torch.randn(5)\ntorch.add(x, x)\ntorch.special.bessel_j0(x)\n"
                      "sys.exit(3)\n")
    env = {**os.environ, "GEMS_VENDOR": "interpreter"}
    proc = subprocess.run([sys.executable, "-m", "gems.tracing", "--csv", str(tmp_path / "t.csv"), "--json",
                           str(tmp_path / "t.json"), str(script)], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 3, proc.stderr  # the script's own exit status
    assert "gems-trace: vendor interpreter (the GEMS_VENDOR environment variable)" in proc.stderr
    assert "RuntimeWarning" not in proc.stderr
    with open(tmp_path / "t.csv", newline="") as handle:
        rows = {r["overload"]: r for r in csv.DictReader(handle)}
    assert rows["add.Tensor"]["gems"] == "1" and rows[UNSERVED]["not registered"] == "1"
    data = json.loads((tmp_path / "t.json").read_text())
    assert data["vendor"] == "interpreter" and {r["overload"] for r in data["overloads"]} >= {"add.Tensor", UNSERVED}


def test_module_exports_the_context_manager():
    assert gems.trace is tracing.trace and isinstance(gems.trace(), tracing.Trace)


def test_views_metadata_and_transfers_are_not_compute_calls():
    x = torch.randn(4, 8)
    with gems.use_gems(include=["add"]), gems.trace() as t:
        y = torch.add(x, x)          # compute, served by gems
        y.t().expand(1, 8, 4)        # views
        torch.empty_like(y)          # an allocation
        y.sum().item()               # compute (sum; ATen's here: not included) and a host read-back
        y.to("meta")                 # a copy to another device
    kinds = {r["overload"]: r["kind"] for r in t.summary()}
    assert kinds["add.Tensor"] == "compute" and kinds["sum"] == "compute"
    assert kinds["t"] == kinds["expand"] == "view"
    assert kinds["empty_like"] == kinds["_local_scalar_dense"] == "metadata"
    assert kinds["_to_copy (transfer)"] == "transfer"
    assert t.compute_share() == (1, 2)
    assert [r.overload for r in t.unserved()] == ["sum"]
    assert "2 compute calls, 1 of them ran a gems kernel (50.0%)" in t.table()


def test_cli_refuses_a_missing_script_or_an_unwritable_table_before_running(tmp_path):
    script = tmp_path / "model.py"
    script.write_text("open(__file__ + '.ran', 'w')\n")
    env = {**os.environ, "GEMS_VENDOR": "interpreter"}
    for argv, words in (([str(tmp_path / "missing.py")], "script"),
                        (["--csv", str(tmp_path / "no" / "t.csv"), str(script)], "--csv"),
                        (["--json", str(tmp_path), str(script)], "--json")):
        proc = subprocess.run([sys.executable, "-m", "gems.tracing", *argv], cwd=REPO, env=env, capture_output=True,
                              text=True, timeout=300)
        assert proc.returncode == 2 and f"gems-trace: error: {words}" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "model.py.ran").exists()
