"""Autotuned kernels keyed by shape class (gems/ops/blas/tuning.py): tuned once per class (each integer key
argument by its next power of two), the choice remembered in the gems cache across processes, and nothing
tuned while a CUDA graph is being captured.

The interpreter cannot benchmark, so the autotuner's timing is replaced by a fixed one that prefers the second
config: what is tested is when tuning happens and which config runs, not the timing.
"""

import warnings

import pytest
import torch
import triton
import triton.language as tl

import gems
from gems.ops.blas import tuning
from gems.runtime.launch import cdiv

gems.vendor()  # chosen before the kernel below is defined: the interpreter vendor's Triton mode applies to it


@triton.jit
def _block_size_kernel(y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.full([BLOCK], BLOCK, tl.int32), mask=offs < n)


_CONFIGS = [triton.Config({"BLOCK": 16}), triton.Config({"BLOCK": 32})]


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    if gems.vendor().name != "interpreter":
        pytest.skip("replaces the interpreter's benchmark")
    monkeypatch.setenv("GEMS_CACHE_DIR", str(tmp_path))


def _tuned():
    """A Tuned over a fresh autotuner of the kernel (as a new process makes one), and the configs it benchmarks."""
    autotuner = triton.autotune(configs=_CONFIGS, key=["n"])(_block_size_kernel)
    benchmarked = []

    def bench(*args, config, **kwargs):
        benchmarked.append(config.kwargs["BLOCK"])
        return 1.0 if config.kwargs["BLOCK"] == 32 else 2.0

    autotuner._bench = bench
    return tuning.Tuned(autotuner), benchmarked


def _block(tuned, n):
    """The BLOCK the kernel ran with for ``n`` elements."""
    y = torch.zeros(n, dtype=torch.int32)
    tuned.launch(lambda meta: (cdiv(n, meta["BLOCK"]),), y, n)
    assert torch.all(y == y[0])
    return int(y[0])


def test_a_shape_class_is_tuned_once_and_remembered_across_processes(tmp_path):
    tuned, benchmarked = _tuned()
    assert _block(tuned, 20) == 32 and benchmarked == [16, 32]  # class 32: tuned
    assert _block(tuned, 25) == 32 and _block(tuned, 32) == 32 and benchmarked == [16, 32]  # the same class
    assert _block(tuned, 40) == 32 and benchmarked == [16, 32, 16, 32]  # class 64: tuned once more
    assert len(list((tmp_path / "tuning").glob("_block_size_kernel-*.json"))) == 1
    again, benchmarked = _tuned()  # another process: the gems cache remembers both classes
    assert _block(again, 30) == 32 and _block(again, 60) == 32 and benchmarked == []
    assert _block(again, 100) == 32 and benchmarked == [16, 32]  # class 128 was never tuned


def test_nothing_is_tuned_while_a_cuda_graph_is_captured(monkeypatch):
    tuned, benchmarked = _tuned()
    monkeypatch.setattr(tuning, "_capturing", lambda: True)
    with pytest.warns(RuntimeWarning, match="no tuned config for shape class .* CUDA graph"):
        assert _block(tuned, 20) == 16  # the first config that fits, untuned
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # said once per kernel
        assert _block(tuned, 40) == 16 and benchmarked == []
    monkeypatch.setattr(tuning, "_capturing", lambda: False)
    assert _block(tuned, 20) == 32 and benchmarked == [16, 32]  # after capture: tuned as usual
