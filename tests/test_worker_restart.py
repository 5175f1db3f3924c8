"""A conformance worker whose device is lost ends itself, and pytest-xdist carries on with a fresh one
(gems/testing/worker_restart.py). Simulated on the CPU: a plugin makes the device "lost" once, after the
first case any worker runs; every case must still get its result."""

import json
import os
import subprocess
import sys
from pathlib import Path

from gems.testing import worker_restart

ROOT = Path(__file__).resolve().parents[1]

LOSE_ONCE = """
from pathlib import Path

from gems.testing import worker_restart

MARK = Path({mark!r})


def lost_once(device):
    if MARK.exists():
        return ""
    MARK.write_text("lost")
    return "AcceleratorError: CUDA error: device-side assert triggered (simulated)"


worker_restart.device_lost = lost_once
"""


def test_a_worker_that_loses_its_device_is_replaced_and_every_case_runs(tmp_path):
    (tmp_path / "lose_device_once.py").write_text(LOSE_ONCE.format(mark=str(tmp_path / "lost")))
    report = tmp_path / "report"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "conformance", "--vendor", "interpreter", "--quick", "--ops", "neg,abs",
         "--dtypes", "float32", "-n", "2", "-p", "no:randomly", "-p", "lose_device_once", "--report-dir",
         str(report), "-q"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    output = done.stdout + done.stderr
    assert (tmp_path / "lost").exists(), output
    assert "lost its device after" in output and "crashed" in output, output
    assert done.returncode == 1, output  # the case that was running when the worker ended is reported crashed
    results = json.loads((report / "conformance.json").read_text())
    assert len(results["cases"]) == sum(results["collected"].values()), results["summary"]
    assert results["summary"]["fail"] == results["summary"]["error"] == 0, results["summary"]


def test_a_device_that_synchronizes_is_not_lost():
    assert worker_restart.device_lost("cpu") == ""


def test_a_device_whose_synchronize_raises_is_lost(monkeypatch):
    class Broken:
        @staticmethod
        def is_available():
            return True

        @staticmethod
        def synchronize():
            raise RuntimeError("CUDA error: device-side assert triggered\nmore lines")

    monkeypatch.setattr(worker_restart.torch, "fakedev", Broken, raising=False)
    assert worker_restart.device_lost("fakedev") == "RuntimeError: CUDA error: device-side assert triggered"


def test_an_unknown_device_is_not_probed():
    assert worker_restart.device_lost("notadevice") == ""
