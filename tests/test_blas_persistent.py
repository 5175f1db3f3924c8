"""The persistent GEMM of large fp16/bf16 products (gems/ops/blas/persistent.py) on the interpreter vendor: which
products reach which mode under the vendor's gemm_route thresholds, what a tensor descriptor can read, the K
split and its second pass, which calls the native layer may replay, the tuning classes, and the models perf
suite's operands against what F.linear hands to ATen."""

import os
import shutil

import pytest
import torch
import torch.nn.functional as F
import triton.language as tl
from torch.utils._python_dispatch import TorchDispatchMode
from triton.runtime.jit import JITFunction

import gems
from gems import native
from gems.ops.blas import persistent
from gems.runtime import registration
from gems.testing import samples_blas


@pytest.fixture(autouse=True)
def _gems_on():
    if gems.vendor().name != "interpreter":
        pytest.skip("checks the interpreter vendor (its gemm_route thresholds, Python launch primitive)")
    previous = registration.snapshot()
    gems.enable()
    native.invalidate()
    gems.reset_counts()
    yield
    registration.apply(previous, gems.vendor().dispatch_key)


@pytest.fixture
def routes(monkeypatch):
    """The modes persistent.product ran, in order (not the native layer's dry runs at other sizes)."""
    seen = []
    real = persistent.product

    def product(*args, **kwargs):
        if registration.recording is None or not registration.recording.dry:
            seen.append(kwargs.get("how", args[6] if len(args) > 6 else "pointer"))
        return real(*args, **kwargs)
    monkeypatch.setattr(persistent, "product", product)
    return seen


def _one_pointer(x_ptr, n, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 0.0, mask=tl.arange(0, BLOCK) < n)


_one_pointer_kernel = JITFunction(_one_pointer)  # compiled-kernel form, as the CUDA recorder reads it


def _close(got, want, dtype):
    tolerance = {torch.float16: 2e-3, torch.bfloat16: 1e-2}.get(dtype, 1e-5)
    torch.testing.assert_close(got.double(), want, rtol=tolerance, atol=tolerance * 8)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_each_product_reaches_the_mode_its_size_and_layout_give(routes, dtype):
    (m, k, n), (pm, pk, pn) = samples_blas.PERSISTENT_TMA, samples_blas.PERSISTENT_POINTER
    t = {"x": torch.randn(m, k), "w": torch.randn(n, k), "g": torch.randn(m, n), "x2": torch.randn(pm, pk),
         "w2": torch.randn(pn, pk)}
    calls = [
        ("tma", lambda x, w, g, x2, w2: F.linear(x, w)),  # b = W.t(): K-major
        ("tma", lambda x, w, g, x2, w2: g @ w),  # grad_x: both row-major
        ("tma", lambda x, w, g, x2, w2: g.t() @ x),  # grad_W: a M-major
        ("tma", lambda x, w, g, x2, w2: torch.addmm(g, x, w.t(), beta=0.5, alpha=2.0)),
        ("tma", lambda x, w, g, x2, w2: x[:, :pk] @ w[:, :pk].t()),  # rows of 36 elements 72 apart (144 bytes)
        ("pointer", lambda x, w, g, x2, w2: F.linear(x2, w2)),  # rows 72 bytes apart
        ("pointer", lambda x, w, g, x2, w2: x[:pm, 1:pk + 1] @ w[:pn, :pk].t()),  # a starts 2 bytes into a row
    ]
    for _, call in calls:
        got = call(**{name: v.to(dtype) for name, v in t.items()})
        with gems.aten_only():
            want = call(**{name: v.to(dtype).double() for name, v in t.items()})
        _close(got, want, dtype)
    assert routes == [mode for mode, _ in calls]


def test_fp32_fp64_batches_and_small_products_stay_on_the_old_gemm(routes):
    m, k, n = samples_blas.PERSISTENT_TMA
    for dtype in (torch.float32, torch.float64):
        torch.mm(torch.randn(m, k).to(dtype), torch.randn(k, n).to(dtype))
    torch.bmm(torch.randn(2, m, k).half(), torch.randn(2, k, n).half())
    torch.mm(torch.randn(20, 19).half(), torch.randn(19, 21).half())  # 15,960 flops: under 2^14
    torch.mm(torch.randn(16, k).half(), torch.randn(k, n).half())  # 16 rows: skinny.py's
    assert routes == []


def test_a_tensor_descriptor_reads_one_unit_stride_and_16_byte_rows():
    x = torch.randn(8, 64).half()
    assert persistent._k_major(x, 1) == (True, True)  # as a (M, K): row-major
    assert persistent._k_major(x.t(), 1) == (False, True)  # as a: M-major (grad_W's g.t())
    assert persistent._k_major(x.t(), 0) == (True, True)  # as b (K, N): K-major (linear's W.t())
    assert persistent._k_major(x, 0) == (False, True)  # as b: row-major
    assert persistent._k_major(x[:, :60], 1) == (True, True)  # rows 64 apart, 60 long
    assert persistent._k_major(torch.randn(8, 60).half(), 1) == (True, False)  # rows 120 bytes apart
    assert persistent._k_major(x[:, 1:], 1) == (True, False)  # starts 2 bytes in
    assert persistent._k_major(x[:, ::2], 1)[1] is False  # no unit stride
    assert persistent._k_major(torch.randn(1, 64).half().expand(8, 64), 1)[1] is False  # rows 0 apart


# (M, K, N) and the mode its rows give (100 K of fp16 are 200 bytes apart: no tensor descriptor; 112 are 224). The
# interpreter's rule (32 x 32 tiles, 3 or more K steps of 32, the last one partial) splits one tile in two: the
# one tile of a one-tile product, the last of 9 tiles.
@pytest.mark.parametrize("shape, mode", [(samples_blas.PERSISTENT_SPLIT, "pointer"), ((32, 112, 32), "tma"),
                                         (samples_blas.PERSISTENT_TAIL, "pointer"), ((72, 112, 72), "tma")])
def test_split_k_and_its_second_pass_add_the_bias_in_order(monkeypatch, routes, shape, mode):
    splits = []
    real = persistent._finish

    def finish(grid, *args, **kwargs):
        splits.append((grid[0], args[-2]))  # (split tiles, SPLIT_K)
        return real(grid, *args, **kwargs)
    monkeypatch.setattr(persistent, "_finish", finish)
    m, k, n = shape
    for dtype in (torch.float16, torch.bfloat16):
        bias, a, b = torch.randn(n).to(dtype), torch.randn(m, k).to(dtype), torch.randn(k, n).to(dtype)
        got = torch.addmm(bias, a, b, beta=0.5, alpha=2.0)
        with gems.aten_only():
            want = torch.addmm(bias.double(), a.double(), b.double(), beta=0.5, alpha=2.0)
        _close(got, want, dtype)
    assert routes == [mode, mode] and splits == [(1, 2)] * 2


@pytest.mark.skipif(shutil.which(os.environ.get("CXX", "c++")) is None, reason="no C++ compiler: no native layer")
@pytest.mark.parametrize("mode", ["pointer", "tma"])
def test_the_native_layer_replays_both_modes(routes, mode):
    (m, k, n) = samples_blas.PERSISTENT_TMA if mode == "tma" else samples_blas.PERSISTENT_POINTER
    for _ in range(4):
        a, b = torch.randn(m, k).half(), torch.randn(k, n).half()
        got = torch.mm(a, b)
        with gems.aten_only():
            _close(got, a.double() @ b.double(), torch.float16)
    assert set(routes) == {mode}  # the Python path ran this mode: it tunes (once per class), then records
    assert native.call_counts().get("mm", 0) >= 2, native.python_reasons()  # and the last calls replayed


def test_a_cuda_plan_carries_the_global_scratch_the_kernel_needs():
    """The TMA mode's tensor descriptors live in global scratch: the CUDA launch spec carries its bytes per
    program (the C++ launch allocates that times the programs per replay); scratch aligned past the caching
    allocator's 512 bytes, or profile scratch, keeps the call in Python."""
    from types import SimpleNamespace

    from gems.native import record

    def compiled(**meta):
        base = {"num_warps": 4, "shared": 1024, "num_ctas": 1, "global_scratch_size": 128, "global_scratch_align": 128}
        return SimpleNamespace(function=7, metadata=SimpleNamespace(**{**base, **meta}),
                               src=SimpleNamespace(signature={"x_ptr": "*fp16", "n": "i32", "BLOCK": "constexpr"}))
    launcher = SimpleNamespace(kernel=_one_pointer_kernel)
    args = (torch.empty(4), 5, 16)
    argspec = (("t", 0, 0, 0, torch.float16, (4,), (1,)), ("c", 5), ("c", 16))
    launch, where = record._cuda_launch(launcher, compiled(), (3, 1, 1), args, argspec)
    assert launch[:6] == (7, 3, 1, 1, 128, 1024) and launch[8] == 128 and where[1][0] == "param"
    for meta in ({"global_scratch_align": 1024}, {"profile_scratch_size": 64}):
        with pytest.raises(record.NotRecordable):
            record._cuda_launch(launcher, compiled(**meta), (3, 1, 1), args, argspec)


def test_tuning_is_per_power_of_two_of_each_size_and_per_layout():
    assert persistent._tma.autotuner.keys == persistent._pointer.autotuner.keys == ["M", "N", "K", "A_K_MAJOR",
                                                                                     "B_K_MAJOR"]

    def key(m, n, k, forward=True):
        a = torch.empty(m, k, dtype=torch.float16, device="meta")
        named = {"a_ptr": a, "M": m, "N": n, "K": k, "A_K_MAJOR": forward, "B_K_MAJOR": forward}
        return persistent._pointer.key(named)

    assert key(1000, 4096, 4096) == key(1024, 4096, 4096) != key(2048, 4096, 4096)
    assert len({key(2048, n, 4096) for n in (768, 1024, 3072, 4096, 11008)}) == 3  # 1024, 4096, 16384
    assert key(2048, 4096, 4096) != key(2048, 4096, 4096, forward=False)


class _Products(TorchDispatchMode):
    """The (a strides, b strides) of each mm/addmm dispatched."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func in (torch.ops.aten.mm.default, torch.ops.aten.addmm.default):
            a, b = args[-2:]
            self.seen.append((a.shape, a.stride(), b.shape, b.stride()))
        return func(*args, **(kwargs or {}))


def test_the_models_perf_inputs_have_the_layouts_linear_hands_to_aten():
    # x[M, K] @ W[N, K]^T forward (with and without a bias), then grad_x = g @ W and grad_W = g^T @ x.
    m, k, n = 6, 8, 5
    with gems.aten_only():
        for bias in (False, True):
            x, w = torch.randn(m, k, requires_grad=True), torch.randn(n, k, requires_grad=True)
            b = torch.randn(n, requires_grad=True) if bias else None
            with _Products() as mode:
                y = F.linear(x, w, b)
                y.backward(torch.randn_like(y))
            forward, *backward = mode.seen
            perf = samples_blas.perf_inputs("addmm" if bias else "mm")
            sample = perf([m, k, n, samples_blas.B_K_MAJOR], torch.float32, "cpu")
            assert _layout(*sample.args[-2:]) == forward
            grads = {_layout(*perf_args) for perf_args in (
                samples_blas.perf_inputs("mm")([m, n, k, samples_blas.ROW_MAJOR], torch.float32, "cpu").args,
                samples_blas.perf_inputs("mm")([n, m, k, samples_blas.A_M_MAJOR], torch.float32, "cpu").args)}
            assert set(backward) == grads


def _layout(a, b):
    return a.shape, a.stride(), b.shape, b.stride()


def test_the_models_suite_declares_layouts_for_every_product():
    from gems.perf import shapes

    book = shapes.load()
    layouts = {samples_blas.ROW_MAJOR, samples_blas.B_K_MAJOR, samples_blas.A_M_MAJOR}
    for key, rank in (("mm", 3), ("addmm", 3), ("bmm", 4), ("baddbmm", 4)):
        entries = book.shapes(key, "models")
        assert entries and all(len(s.dims) == rank + 1 and s.dims[rank] in layouts for s in entries), key
    tokens = {s.dims[0] for s in book.shapes("mm", "models") if s.dims[3] == samples_blas.B_K_MAJOR}
    assert {1, 16, 128, 197, 512, 1000, 2048, 8192} <= tokens


def test_nvidia_routes_backward_products_of_few_waves_to_the_split_persistent_gemm(monkeypatch):
    """The nvidia vendor's rules (read here without a GPU, for an H100's 132 multiprocessors): a backward product
    with fewer than 512 tiles of 128 x 128 outputs and a K of 2048 or more (an LM head's grad_x over a
    vocabulary, BERT's grad_W) takes the persistent GEMM, TMA from 2^33 flops, with K split to fill the device
    and in runs of at most 16384 (Hopper's MMA sums drift from the oracle over a whole vocabulary); with more
    outputs, or a shorter K, the backward products stay on gemm.py's GEMM. Forward products take it from 2^30
    flops. A product whose last wave of tiles is at most half full splits only that wave's tiles."""
    from pathlib import Path

    from gems.runtime import configs

    rules = configs.load_heuristics(Path(gems.__file__).parent / "runtime/backend/_nvidia/heuristics/blas.py")
    route, split = rules["gemm_route"], rules["gemm_persistent"]["SPLIT_K"]
    monkeypatch.setitem(split.__globals__, "multiprocessors", lambda device: 132)

    def mode(m, n, k, forward=False):
        args = {"M": m, "N": n, "K": k, "A_K_MAJOR": forward, "B_K_MAJOR": forward}
        flops = 2 * m * n * k
        if flops < route["PERSISTENT_MIN_FLOPS"](args):
            return "gemm.py"
        return "tma" if flops >= route["TMA_MIN_FLOPS"](args) else "pointer"

    assert [mode(m, 4096, 128256) for m in (128, 512, 1000, 2048)] == ["tma", "tma", "tma", "gemm.py"]
    assert [mode(512, 768, 3072), mode(128, 4096, 14336), mode(512, 768, 1024)] == ["pointer", "tma", "gemm.py"]
    assert [mode(2048, 4096, 11008), mode(4096, 4096, 2048)] == ["gemm.py", "gemm.py"]
    assert [mode(1000, 768, 3072, forward=True), mode(2048, 768, 3072, forward=True)] == ["pointer", "tma"]
    assert mode(16, 64, 64, forward=True) == "gemm.py"

    def plan(m, k, n=4096):
        args = {"M": m, "N": n, "K": k, "BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64,
                "a_ptr": torch.empty(0, device="meta")}
        return rules["gemm_persistent"]["WHOLE_TILES"](args), split(args)

    # Few tiles or a long K: every tile split (0 whole), into runs of at most 16384.
    assert [plan(128, 128256), plan(512, 32000), plan(512, 128256), plan(128, 4096)] == [(0, 8), (0, 2), (0, 8), (0, 8)]
    # Tiles of 128 x 256 over 4096 columns: 1024 rows, 128 tiles, one wave of 132; 1152 rows, 144 tiles, 12 in a
    # second wave, split in 8 (runs of 8 steps of 64); 1536 rows, 192 tiles, a tail of 60, split in 2; 1664 rows, 208
    # tiles, a tail of 76 (over half the device); one row of tiles over 264 x 256 columns, two full waves.
    assert [plan(1024, 4096), plan(1152, 4096), plan(1536, 4096), plan(1664, 4096), plan(128, 4096, 264 * 256)] == [
        (128, 1), (132, 8), (132, 2), (208, 1), (264, 1)]
    assert plan(1152, 512) == (144, 1)  # 8 steps of K: no run would keep its pipeline full
