"""tune_configs.yaml: checked when a vendor is activated, inherited key by key from the base vendor,
and the source of the configs autotuned kernels run with (interpreter vendor)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import triton

import gems
from gems.runtime import configs, selection
from gems.runtime.tuning_timer import device_time
from gems.runtime.vendor import Capabilities, VendorError, VendorInfoBase

REPO = Path(__file__).resolve().parents[1]
BACKENDS = REPO / "gems" / "runtime" / "backend"
GOOD = "{META: {BLOCK_M: 32, BLOCK_N: 32, BLOCK_K: 32, GROUP_M: 4}, num_warps: 4, num_stages: 2}"


def _write(tmp_path, text) -> Path:
    path = tmp_path / "tune_configs.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(("text", "line", "key", "says"), [
    (f"# a comment\ngem:\n  - {GOOD}\n", 2, "gem", "unknown operator key"),
    (f"gemm:\n  - {GOOD}\n  - {{META: {{BLOCK_M: 16, BLOCK_N: 16, BLOCK_K: 16, GROUP_M: 1}}, num_warp: 4}}\n", 3,
     "gemm", "unknown field 'num_warp'"),
    ("gemm:\n  - META: {BLOCK_M: 16, BLOCK_N: 16, BLOCK_K: 16, GROUP_M: 1}\n    num_warps: '4'\n", 3, "gemm",
     "num_warps must be a positive integer"),
    ("gemm:\n  - META: {BLOCK_M: 16, BLOCK_N: 16, BLOCK_K: 16, GROUP_M: 1}\n    num_stages: -1\n", 3, "gemm",
     "num_stages must be a positive integer"),
    ("gemm:\n  - META:\n      BLOCK_M: 16\n      BLOCK_N: 24\n      BLOCK_K: 16\n      GROUP_M: 1\n", 4, "gemm",
     "BLOCK_N must be a power of two"),
    ("gemm:\n  - META: {BLOCK_M: 16, BLOCK_N: 16, BLOCK_K: 16}\n", 2, "gemm", "META lacks GROUP_M"),
    ("gemv:\n  - META: {BLOCK_M: 16, BLOCK_K: 16, BLOCK_N: 8}\n", 2, "gemv", "unknown META name 'BLOCK_N'"),
    ("gemv:\n  - META: {BLOCK_M: 16, BLOCK_K: true}\n", 2, "gemv", "BLOCK_K must be a positive integer"),
    ("gemv: {META: {BLOCK_M: 16, BLOCK_K: 16}}\n", 1, "gemv", "expected a non-empty list of configs"),
    ("gemv:\n  - [16, 16]\n", 2, "gemv", "expected a mapping with a META mapping"),
])
def test_a_malformed_file_names_the_file_the_line_and_the_key(tmp_path, text, line, key, says):
    path = _write(tmp_path, text)
    with pytest.raises(VendorError) as err:
        configs.load_tune_configs(path)
    message = str(err.value)
    assert f"{path}:{line}:" in message and repr(key) in message and says in message, message


def test_bad_yaml_and_a_non_mapping_name_the_file(tmp_path):
    with pytest.raises(VendorError, match="not valid YAML"):
        configs.load_tune_configs(_write(tmp_path, "gemm: [\n"))
    with pytest.raises(VendorError, match="expected a mapping of operator key"):
        configs.load_tune_configs(_write(tmp_path, "- gemm\n"))


def test_configs_become_triton_configs(tmp_path):
    path = _write(tmp_path, f"gemm:\n  - {GOOD}\n")
    (config,) = configs.triton_configs(configs.load_tune_configs(path)["gemm"])
    assert config.kwargs == {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "GROUP_M": 4}
    assert (config.num_warps, config.num_stages) == (4, 2)


@pytest.mark.parametrize("vendor", ["nvidia", "interpreter"])
def test_shipped_files_are_valid_and_cover_every_key(vendor):
    table = configs.load_tune_configs(BACKENDS / f"_{vendor}" / "tune_configs.yaml")
    assert set(table) == set(configs.TUNE_KEYS)


def _backend(name, directory, base=None, multi=True):
    info = VendorInfoBase(name, "cpu", None, "CPU")
    return selection.Backend(name, info, Capabilities(multi_config_autotune=multi), directory, base, None)


def test_keys_fall_back_to_the_base_vendor_and_a_single_config_device_takes_the_first(tmp_path):
    base_dir, own_dir = tmp_path / "base", tmp_path / "own"
    base_dir.mkdir()
    own_dir.mkdir()
    (base_dir / "tune_configs.yaml").write_text(
        f"gemm:\n  - {GOOD}\ngemv:\n"
        "  - {META: {BLOCK_M: 8, BLOCK_K: 64}}\n  - {META: {BLOCK_M: 4, BLOCK_K: 8}}\n")
    (own_dir / "tune_configs.yaml").write_text(
        "gemm:\n  - {META: {BLOCK_M: 16, BLOCK_N: 64, BLOCK_K: 16, GROUP_M: 2}, num_warps: 8}\n")
    base = _backend("base", base_dir)
    own = _backend("own", own_dir, base)
    assert own.tune_configs("gemm")[0].kwargs["BLOCK_N"] == 64  # its own entry replaces the base's
    assert [c.kwargs["BLOCK_M"] for c in own.tune_configs("gemv")] == [8, 4]  # inherited whole
    single = _backend("single", own_dir, base, multi=False)
    assert [c.kwargs["BLOCK_M"] for c in single.tune_configs("gemv")] == [8]
    with pytest.raises(VendorError, match="no tune config for key 'nope'"):
        own.tune_configs("nope")


def test_activation_refuses_a_malformed_file_of_any_vendor_in_the_chain(tmp_path, monkeypatch):
    base_dir, own_dir = tmp_path / "base", tmp_path / "own"
    base_dir.mkdir()
    own_dir.mkdir()
    bad = base_dir / "tune_configs.yaml"
    bad.write_text(f"gemm:\n  - {GOOD}\nsoftmax:\n  - {GOOD}\n")
    fake = _backend("own", own_dir, _backend("base", base_dir))
    monkeypatch.setattr(selection, "_current", None)
    monkeypatch.setattr(selection, "load_backend", lambda name: fake)
    monkeypatch.setattr(selection, "check_available", lambda backend: None)
    with pytest.raises(VendorError) as err:
        selection.select("own")
    assert f"{bad}:3:" in str(err.value) and "'softmax'" in str(err.value)
    assert selection._current is None  # nothing was activated


def test_autotuned_kernels_cache_their_results_on_disk(monkeypatch):
    # Triton keeps disk caching off under the interpreter, so what is checked here is the request (and the timer
    # its configs are compared with: tests/test_tuning_timer.py).
    seen = {}
    monkeypatch.setattr(triton, "autotune", lambda **kwargs: seen.update(kwargs) or (lambda fn: fn))
    configs.autotune(["config"], ["K"], restore_value=["c_ptr"])
    assert seen == {"configs": ["config"], "key": ["K"], "cache_results": True, "restore_value": ["c_ptr"],
                    "do_bench": device_time}


def test_the_interpreter_reports_that_it_runs_the_first_config():
    notes = " ".join(selection.load_backend("interpreter").capabilities.notes)
    assert "first config" in notes and "tune_configs.yaml" in notes


# A vendor made by gems-scaffold on the interpreter, whose tune_configs.yaml names a gemm config
# unlike the base's: mm must run with it (and mv with the base's gemv config, which it does not list).
PROBE = """
import json, torch, gems
a, b = torch.randn(40, 24), torch.randn(24, 36)
expected = a.double().mm(b.double()).float()  # ATen, before gems is enabled
gems.enable()
got = torch.mm(a, b)
gems.disable()
assert torch.allclose(got, expected, atol=1e-4)
gems.enable()
torch.mv(a, torch.randn(24))
from gems.ops.blas import gemm, gemv
print(json.dumps({"calls": gems.call_counts()["gems"].get("mm", 0),
                  "gemm": gemm._gemm_kernel.best_config.all_kwargs(),
                  "gemv": gemv._gemv_kernel.best_config.all_kwargs()}))
"""


def _probe(copy: Path, vendor: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.update(PYTHONPATH=str(copy), GEMS_VENDOR=vendor)
    proc = subprocess.run([sys.executable, "-c", PROBE], cwd=copy, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.xdist_group("scaffold")
def test_a_vendor_tune_config_changes_the_config_the_kernel_runs_with(tmp_path):
    copy = tmp_path / "gems-copy"
    shutil.copytree(REPO, copy, ignore=shutil.ignore_patterns(
        ".git", "runs", ".venv*", "__pycache__", "*.egg-info", ".ruff_cache", ".pytest_cache", "reports"))
    env = {k: v for k, v in os.environ.items() if k != "GEMS_VENDOR" and not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = str(copy)
    subprocess.run([sys.executable, "-m", "gems.scaffold", "--vendor", "tuned", "--base", "interpreter",
                    "--device-name", "cpu"], cwd=copy, env=env, check=True, capture_output=True, timeout=300)
    (copy / "gems" / "runtime" / "backend" / "_tuned" / "tune_configs.yaml").write_text(
        "gemm:\n  - {META: {BLOCK_M: 16, BLOCK_N: 64, BLOCK_K: 16, GROUP_M: 2}, num_warps: 2, num_stages: 1}\n")
    tuned, base = _probe(copy, "tuned"), _probe(copy, "interpreter")
    assert tuned["calls"] == base["calls"] == 1
    assert {k: tuned["gemm"][k] for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "num_warps")} == \
        {"BLOCK_M": 16, "BLOCK_N": 64, "BLOCK_K": 16, "GROUP_M": 2, "num_warps": 2}
    base_file = configs.load_tune_configs(BACKENDS / "_interpreter" / "tune_configs.yaml")
    assert {k: base["gemm"][k] for k in base_file["gemm"][0]["META"]} == base_file["gemm"][0]["META"]
    assert tuned["gemv"] == base["gemv"]  # not in the vendor's file: the base's config


def test_products_run_the_vendor_config_in_this_process():
    if gems.vendor().name != "interpreter":
        pytest.skip("checks the interpreter vendor's own file")
    from gems.ops.blas import gemm

    with gems.use_gems(include=["mm"]):
        torch.mm(torch.randn(20, 7), torch.randn(7, 18))  # more than 16 rows and columns: the GEMM
    expected = configs.load_tune_configs(BACKENDS / "_interpreter" / "tune_configs.yaml")["gemm"][0]["META"]
    assert {k: gemm._gemm_kernel.best_config.kwargs[k] for k in expected} == expected


def test_gemm_configs_that_cannot_fit_shared_memory_are_not_compiled(monkeypatch):
    from gems.ops.blas import tuning

    big = triton.Config({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8}, num_stages=3)  # 144 KiB fp16
    small = triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8}, num_stages=4)  # 64 KiB fp16
    monkeypatch.setattr(tuning, "shared_memory", lambda device: 227 * 1024)  # an H100's per-block limit
    fitting = lambda dtype: tuning.fitting_configs([big, small], {"a_ptr": torch.empty(1, dtype=dtype)})  # noqa: E731
    assert fitting(torch.float16) == [big, small]
    assert fitting(torch.float32) == [small]
    assert fitting(torch.float64) == [small]  # none fits: the smallest is kept
