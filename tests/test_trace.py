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
