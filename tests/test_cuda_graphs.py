"""CUDA graphs with gems (docs/native.md, "CUDA graphs"): warm calls captured as native replays (no Python, no
host synchronization, outputs from the graph's pool), then replayed with new input values; a size-generic plan
serves a size first seen during capture; an untuned shape class runs a compiled config during capture.

Needs an NVIDIA GPU: on any other machine every test here is skipped (the interpreter has no streams to capture).
"""

import os
import shutil

import pytest
import torch

import gems
from gems import native

pytestmark = [
    pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA graph capture needs a CUDA device"),
    pytest.mark.skipif(shutil.which(os.environ.get("CXX", "c++")) is None, reason="no C++ compiler: no native layer"),
    pytest.mark.skipif(gems.vendor().device != "cuda", reason="captures the launches of a CUDA vendor"),
    pytest.mark.usefixtures("gems_enabled"),
]


def aten(fn, *args):
    with gems.aten_only():
        return fn(*args)


def step(x, w, m, q, k, v):
    """A decode-like step: rms_norm (autograd-level), a product, pointwise ops, softmax and attention."""
    h = torch.nn.functional.rms_norm(x, (x.shape[-1],), w)
    h = torch.nn.functional.silu(h @ m) + 1.0
    attn = torch.nn.functional.scaled_dot_product_attention(q, k, v)
    return torch.softmax(h, dim=-1), attn.abs()


def inputs(seed, length=64):
    gen = torch.Generator(device="cuda").manual_seed(seed)

    def make(*shape):
        return torch.randn(*shape, device="cuda", dtype=torch.float16, generator=gen)

    return make(4, 256), make(256), make(256, 512), make(1, 8, 1, 64), make(1, 8, length, 64), make(1, 8, length, 64)


def python_calls() -> int:
    return sum(sum(reasons.values()) for reasons in native.python_calls().values())


def test_warm_calls_capture_as_native_replays_and_replay_with_new_values():
    static = inputs(0)
    with torch.no_grad():
        for seed in (1, 2):  # records, then replays (tuning included)
            step(*inputs(seed))
        torch.cuda.synchronize()
        torch.cuda.set_sync_debug_mode("error")  # a warm call must not wait for the device
        try:
            step(*static)
        finally:
            torch.cuda.set_sync_debug_mode("default")
        # A first capture runs PyTorch's own bookkeeping once (the generator's seed and offset tensors: clone,
        # fill_, zero_ of new int64 tensors, served by gems too): from the second capture on they are replays.
        with torch.cuda.graph(torch.cuda.CUDAGraph()):
            step(*static)
        before_python, before_native = python_calls(), sum(native.call_counts().values())
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            outs = step(*static)
        assert python_calls() == before_python, native.python_calls()  # every captured call was a replay
        assert sum(native.call_counts().values()) > before_native
        for seed in (3, 4):
            for dst, src in zip(static, inputs(seed)):
                dst.copy_(src)
            graph.replay()
            torch.cuda.synchronize()
            for got, want in zip(outs, aten(step, *static)):
                torch.testing.assert_close(got, want, rtol=2e-2, atol=2e-2)


def test_a_new_size_of_a_known_family_is_served_during_capture():
    with torch.no_grad():
        for n in (100, 101, 102):  # the family and its size-generic plan for 65..128
            torch.add(torch.randn(n, device="cuda"), torch.randn(n, device="cuda"))
        x, y = torch.randn(117, device="cuda"), torch.randn(117, device="cuda")
        # add's own calls: a capture also runs PyTorch's bookkeeping (the generators' state tensors) through gems
        before = native.python_calls().get("add.Tensor", {})
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            out = torch.add(x, y)
        assert native.python_calls().get("add.Tensor", {}) == before, native.python_calls()
        assert native.generic_counts().get("add.Tensor", 0) >= 2
        x.copy_(torch.randn(117, device="cuda"))
        graph.replay()
        torch.cuda.synchronize()
        torch.testing.assert_close(out, aten(torch.add, x, y))


def test_an_untuned_shape_class_runs_a_compiled_config_during_capture():
    def operands(m):
        return (torch.randn(m, 96, device="cuda", dtype=torch.float16),
                torch.randn(96, 80, device="cuda", dtype=torch.float16))

    # More than 64 rows and columns: gemm.py's GEMM (fewer take the few-row kernel on nvidia). Tunes the class
    # M 128 and compiles its config for these dtypes and alignments (M not a multiple of 16, as 300 is not:
    # Triton compiles a kernel apart for sizes that are).
    torch.mm(*operands(72))
    a, b = operands(300)  # the class M 512, never tuned: nothing may be benchmarked during capture
    graph = torch.cuda.CUDAGraph()
    with pytest.warns(RuntimeWarning, match="no tuned config for shape class"):
        with torch.cuda.graph(graph):
            out = torch.mm(a, b)
    graph.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(out, aten(torch.mm, a, b), rtol=2e-2, atol=2e-2)
