"""How the blas kernels launch (gems/ops/blas/tuning.py, gemm.py) on the interpreter vendor: the tuned
config becomes a plain launch the native layer replays, tuning refuses what Triton's restoring copy
refuses on a GPU, GEMV splits K when its rows give too few programs, few-row products take the skinny
kernel (and split K too) unless one row reads its matrix along K (the GEMV), and the per-device addmv rule."""

import os
import shutil

import pytest
import torch
import triton
import triton.language as tl

import gems
from gems import native
from gems.ops.blas import addmv, gemm, gemv, products, skinny, tuning
from gems.runtime import configs, registration


@pytest.fixture(autouse=True)
def _gems_on(request):
    if gems.vendor().name != "interpreter":
        pytest.skip("checks the interpreter vendor (single-config tuning, Python launch primitive)")
    request.getfixturevalue("gems_enabled")


def _counting(monkeypatch, tuned):
    """Count the launches of ``tuned`` through the autotuner and as a plain launch."""
    seen = {"tuning": 0, "plain": 0}
    for path, launcher in (("tuning", tuned._tuning), ("plain", tuned._plain)):
        def counted(*args, _launcher=launcher, _path=path, **kwargs):
            seen[_path] += 1
            return _launcher(*args, **kwargs)
        monkeypatch.setattr(tuned, f"_{path}", counted)
    return seen


def test_a_single_config_is_launched_plainly_and_keyed_by_shape_class(monkeypatch):
    seen = _counting(monkeypatch, gemm._gemm_kernel)
    a, b = torch.randn(19, 21), torch.randn(21, 17)  # more than 16 rows and columns: the GEMM
    with gems.aten_only():
        want = a.double().mm(b.double()).float()
    for _ in range(3):
        torch.testing.assert_close(torch.mm(a, b), want, rtol=1e-5, atol=1e-5)
    # The interpreter's one config needs no tuning (tests/test_tuning_classes.py tunes several).
    assert seen["tuning"] == 0 and seen["plain"] >= 1  # the later calls may be the native layer's replays
    assert any(key[:3] == (32, 32, 32) and "ieee" in key for key in gemm._gemm_kernel.chosen)  # PRECISION keyed
    expected = configs.triton_configs(configs.load_tune_configs(
        gems.vendor().directory / "tune_configs.yaml")["gemm"])[0]
    assert gemm._gemm_kernel.best_config.kwargs == expected.kwargs


@pytest.mark.skipif(shutil.which(os.environ.get("CXX", "c++")) is None, reason="no C++ compiler: no native layer")
def test_a_tuned_product_is_replayed_by_the_native_layer():
    a, b = torch.randn(9, 14), torch.randn(14, 6)
    for _ in range(4):
        a, b = torch.randn(9, 14), torch.randn(14, 6)
        torch.testing.assert_close(torch.mm(a, b), a.double().mm(b.double()).float(), rtol=1e-5, atol=1e-5)
    assert native.call_counts().get("mm", 0) >= 3  # recorded on call 1, replayed after


@triton.jit
def _store_kernel(y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.full([BLOCK], 1.0, tl.float32), mask=offs < n)


def test_tuning_refuses_a_restored_tensor_whose_elements_share_memory():
    # Triton copies such a tensor back after each benchmark run on a GPU, and ATen's copy_ refuses an
    # expanded view: the interpreter (which never benchmarks) must fail the same call.
    kernel = tuning.Tuned(configs.autotune([triton.Config({"BLOCK": 16})], ["n"], restore_value=["y_ptr"])(
        _store_kernel))
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        kernel.launch(lambda meta: (1,), torch.zeros(4)[None].expand(3, 4), 12)
    y = torch.zeros(12)
    kernel.launch(lambda meta: (1,), y, 12)
    assert torch.equal(y, torch.ones(12))


def test_gemv_splits_k_over_more_programs_when_its_rows_give_too_few(monkeypatch):
    monkeypatch.setattr(gemv, "multiprocessors", lambda device: 132)  # an H100
    finished = []
    launch = gemv._finish
    monkeypatch.setattr(gemv, "_finish", lambda *args: finished.append(args[-2]) or launch(*args))
    for dtype in (torch.float32, torch.float16):
        mat, vec, bias = torch.randn(40, 700).to(dtype), torch.randn(700).to(dtype), torch.randn(40).to(dtype)
        got = torch.addmv(bias, mat, vec, beta=0.5, alpha=2.0)
        with gems.aten_only():
            want = torch.addmv(bias.double(), mat.double(), vec.double(), beta=0.5, alpha=2.0)
        torch.testing.assert_close(got.double(), want, rtol=2e-3 if dtype == torch.float16 else 1e-5, atol=1e-2)
    # 40 rows: one 32-row block of the interpreter's config; 700 / 64: 11 steps -> 8 runs of K.
    assert finished == [8, 8]


def test_a_single_row_is_an_inner_product_split_over_programs_and_added_in_a_fixed_order(monkeypatch):
    # dot, vdot and a one-row mv run as the reductions' sum of a * b (gemv.py's inner), not on the GEMV kernel,
    # whose split gave one row at most 64 programs; its partial sums are added in one fixed order.
    from gems.ops.reduction import combine

    launches = _counting(monkeypatch, gemv._gemv_kernel)
    grids = []
    launcher = combine._launcher
    monkeypatch.setattr(combine, "_launcher",
                        lambda grid, *args, **kw: grids.append(grid) or launcher(grid, *args, **kw))
    a, b = torch.randn(20000)[::2], torch.randn(10000)
    got = [torch.dot(a, b), torch.vdot(a, b), torch.mv(a[None], b)[0]]
    # The interpreter vendor splits 10000 elements (3 steps of 4096) over 3 programs, then one adds them.
    assert grids == [(1, 3), (1, 1)] * 3
    assert launches == {"tuning": 0, "plain": 0}
    with gems.aten_only():
        want = torch.dot(a.double(), b.double())
        assert all(torch.equal(g, got[0]) for g in got)  # the same launches, the same bits
        torch.testing.assert_close(got[0].double(), want, rtol=1e-5, atol=1e-4)


def test_gemv_tunes_only_one_pass_configs_of_a_matrix_read_along_k_where_any_runs_one_pass(monkeypatch):
    # The tuner times a config's first pass only: a split config would look faster than it runs.
    monkeypatch.setattr(gemv, "multiprocessors", lambda device: 132)  # an H100
    configs = [triton.Config({"BLOCK_M": bm, "BLOCK_K": bk}) for bm, bk in ((4, 512), (16, 256), (128, 32))]
    matrix = torch.empty(1024, 4096)
    def kept(rows, stride_am, stride_ak):
        named = {"a_ptr": matrix, "M": rows, "K": 4096, "stride_am": stride_am, "stride_ak": stride_ak}
        return [c.kwargs["BLOCK_M"] for c in gemv._one_pass_configs(configs, named)]
    assert kept(1024, 4096, 1) == [4, 16]  # 128-row blocks: 8 programs, fewer than a quarter of 132
    assert kept(16, 4096, 1) == [4, 16, 128]  # every config splits: all compared
    assert kept(1024, 1, 1024) == [4, 16, 128]  # read along its rows: splits are that layout's fast path


def test_few_row_products_take_the_skinny_kernel_and_split_k_when_columns_give_too_few(monkeypatch):
    monkeypatch.setattr(skinny, "multiprocessors", lambda device: 132)  # an H100
    seen = _counting(monkeypatch, skinny._skinny_kernel)
    finished = []
    launch = skinny._finish
    monkeypatch.setattr(skinny, "_finish", lambda *args: finished.append(args[-2]) or launch(*args))
    cases = [(torch.float32, 5, 70, 40), (torch.float16, 1, 70, 40), (torch.bfloat16, 40, 70, 3)]
    for dtype, m, k, n in cases:  # 3 output columns: computed transposed
        a, b = torch.randn(m, k).to(dtype), torch.randn(k, n).to(dtype)
        bias = torch.randn(n).to(dtype)
        got = torch.addmm(bias, a, b, beta=0.5, alpha=2.0)
        with gems.aten_only():
            want = torch.addmm(bias.double(), a.double(), b.double(), beta=0.5, alpha=2.0)
        torch.testing.assert_close(got.double(), want, rtol=1e-2 if dtype != torch.float32 else 1e-5, atol=5e-2)
    assert seen["tuning"] + seen["plain"] == len(cases)
    # The interpreter's 32 x 32 config: 40 columns are 2 blocks, 70 / 32 is 3 steps -> one run each of K.
    assert finished == []
    monkeypatch.setattr(skinny, "_MIN_STEPS", 1)
    a, b = torch.randn(16, 300), torch.randn(300, 20)
    with gems.aten_only():
        want = a.double().mm(b.double()).float()
    torch.testing.assert_close(torch.mm(a, b), want, rtol=1e-5, atol=1e-4)
    # 10 steps, but the partial sums of 16 rows stay within a quarter of b's 300 x 4 bytes a column: at most
    # 300 * 4 // (4 * 8 * 16) = 2 runs.
    assert finished == [2]
    a = torch.randn(4, 300)
    torch.mm(a, b)
    assert finished == [2, 8]  # 4 rows: at most 9 runs, 10 steps: a power of two, 8
    def takes(m, n, dtype, along_k=False):  # a (m, 8) @ b (8, n) product, both row-major
        return skinny.takes(torch.empty(m, 8), torch.empty(8, n), dtype, along_k)

    assert not takes(1, 4096, torch.float32) and takes(1, 4096, torch.bfloat16)
    assert takes(16, 4096, torch.float32) and not takes(17, 4096, torch.float16)
    assert not takes(1, 4096, torch.float16, along_k=True) and takes(4, 4096, torch.float16, True)
    # A vendor's SKINNY_MAX_ROWS raises the limit, up to the 64 rows one tile holds.
    monkeypatch.setitem(skinny._ROUTE, "SKINNY_MAX_ROWS", lambda args: 1 << 20 if args["B_K_MAJOR"] else 48)
    assert takes(48, 4096, torch.float16) and not takes(49, 4096, torch.float16)
    assert skinny.takes(torch.empty(64, 8), torch.empty(4096, 8).t(), torch.float16)
    assert not skinny.takes(torch.empty(65, 8), torch.empty(4096, 8).t(), torch.float16)
    # fp32 and fp64 keep 16 rows: the wider tiles are measured in fp16/bf16 only.
    assert not skinny.takes(torch.empty(17, 8), torch.empty(4096, 8).t(), torch.float32)
    assert not skinny.takes(torch.empty(17, 8), torch.empty(4096, 8).t(), torch.float64)


def test_products_of_17_to_64_rows_take_the_skinny_kernel_in_tiles_of_32_and_64_rows(monkeypatch):
    # The interpreter's SKINNY_MAX_ROWS: 64 rows from K = 128 up (16 below it, as for the GEMM's samples).
    monkeypatch.setenv("GEMS_NATIVE_GENERIC", "0")  # no size-generic dry runs: only these calls launch
    seen = _counting(monkeypatch, skinny._skinny_kernel)
    tiles = []
    meta = skinny._skinny_kernel.meta
    monkeypatch.setattr(skinny._skinny_kernel, "meta",
                        lambda c, named: tiles.append(named["BLOCK_M"]) or meta(c, named))
    half = torch.float16
    cases = [(torch.randn(24, 128), torch.randn(128, 40)),  # 24 rows: a 32-row tile
             (torch.randn(72, 128), torch.randn(40, 128).t()),  # 40 columns (linear's layout): computed transposed
             (torch.randn(20, 100), torch.randn(100, 40))]  # K under 128: not here
    for a, b in cases:
        a, b = a.to(half), b.to(half)
        with gems.aten_only():
            want = a.double().mm(b.double())
        torch.testing.assert_close(torch.mm(a, b).double(), want, rtol=2e-3, atol=2e-2)
    assert seen["tuning"] + seen["plain"] == 2 and sorted(set(tiles)) == [32, 64]


def test_one_fp16_row_takes_the_gemv_when_its_matrix_is_read_along_k(monkeypatch):
    # linear's x[1, K] @ W[N, K]^T reads W along K: the GEMV; x @ W with W[K, N] row-major: skinny.
    seen = {"skinny": _counting(monkeypatch, skinny._skinny_kernel), "gemv": _counting(monkeypatch, gemv._gemv_kernel)}
    for dtype in (torch.float16, torch.bfloat16):
        x, w = torch.randn(1, 70).to(dtype), torch.randn(40, 70).to(dtype)
        with gems.aten_only():
            want = x.double() @ w.double().t()
        for got in (torch.nn.functional.linear(x, w), torch.mm(x, w.t().contiguous())):
            torch.testing.assert_close(got.double(), want, rtol=1e-2, atol=5e-2)
    calls = {name: counts["tuning"] + counts["plain"] for name, counts in seen.items()}
    assert calls == {"skinny": 2, "gemv": 2}


def test_addmv_leaves_a_dtype_mix_to_aten_on_the_devices_whose_aten_computes_it(monkeypatch):
    mix = (torch.randn(5, dtype=torch.float64), torch.randn(5, 3), torch.randn(3))
    with pytest.raises(RuntimeError, match="same dtype"):  # the CPU's ATen refuses it, and so does gems here
        torch.addmv(*mix)
    assert not any(k[0] == "addmv" for k in registration.fallback_calls)
    monkeypatch.setattr(addmv, "_MIXED_DTYPES_COMPUTED_ON", ("cpu",))
    with pytest.raises(RuntimeError):  # ATen ran it (and refuses it on the CPU)
        torch.addmv(*mix)
    assert [why for (op, why) in registration.fallback_calls if op == "addmv"] == [addmv._MIXED_REASON]


def test_addmv_refuses_a_written_to_tensor_whose_elements_share_memory_before_any_launch():
    mat, vec = torch.randn(4, 3), torch.randn(3)
    for call, name in ((lambda y: y.addmv_(mat, vec), "self"), (lambda y: torch.addmv(torch.zeros(4), mat, vec, out=y),
                                                                "out")):
        y = torch.ones(1).expand(4)
        with pytest.raises(RuntimeError, match=f"addmv: the written-to tensor \\({name}, strides \\(0,\\)\\).*clone"):
            call(y)
        assert y.tolist() == [1.0] * 4


def test_fp32_precision_follows_the_tf32_flag_on_cuda_only():
    cuda, cpu = torch.device("cuda"), torch.device("cpu")
    flags = torch.backends.cuda.matmul
    previous = flags.allow_tf32
    try:
        flags.allow_tf32 = True
        assert gemm.dot_precision(torch.float32, cuda) == "tf32"
        assert gemm.dot_precision(torch.float32, cpu) == gemm.dot_precision(torch.float16, cuda) == "ieee"
        flags.allow_tf32 = False
        assert gemm.dot_precision(torch.float32, cuda) == "ieee"
    finally:
        flags.allow_tf32 = previous


def test_a_tf32_product_reads_a_row_major_b_from_a_k_major_copy(monkeypatch):
    # Hopper's TF32 wgmma reads B K-major only: gemm.py copies a row-major b so before the kernel.
    monkeypatch.setattr(gemm, "dot_precision", lambda dtype, device: "tf32" if dtype == torch.float32 else "ieee")
    _check_column_major_copy(monkeypatch, operand=1)


def test_an_fma_product_reads_a_row_major_a_from_an_m_major_copy(monkeypatch):
    # Triton's FMA dot reads its first operand 16 bytes at a time only when it is M-major: an IEEE fp32
    # product copies a row-major a so before the kernel (bmm, addmm and baddbmm all go through gemm.py).
    _check_column_major_copy(monkeypatch, operand=0)
    native.invalidate()
    copied = []
    real = gemm.column_major
    monkeypatch.setattr(gemm, "column_major", lambda t: copied.append(t.shape) or real(t))
    a, b, bias = torch.randn(19, 21), torch.randn(21, 17), torch.randn(17)
    with gems.aten_only():
        want = torch.addmm(bias.double(), a.double(), b.double(), beta=0.5, alpha=2.0)
        want_b = torch.baddbmm(bias.double(), a[None].double(), b[None].double(), beta=0.5, alpha=2.0)
    torch.testing.assert_close(torch.addmm(bias, a, b, beta=0.5, alpha=2.0).double(), want, rtol=1e-5, atol=1e-5)
    got = torch.baddbmm(bias, a[None], b[None], beta=0.5, alpha=2.0)
    torch.testing.assert_close(got.double(), want_b, rtol=1e-5, atol=1e-5)
    assert copied == [(1, 19, 21), (1, 19, 21)]
    copied.clear()
    torch.mm(a.double(), b.double())  # fp64 reads a as given
    torch.mm(a.t().contiguous().t(), b)  # already M-major
    assert copied == []


@pytest.mark.parametrize("shape, view", [
    ((1, 1, 1), None), ((1, 5, 3), None), ((2, 65, 130), None), ((3, 64, 64), None), ((2, 7, 1), None),
    ((2, 70, 3, 9), "strided"), ((3, 5, 67), "batch-last"), ((4, 0, 5), None), ((3, 9, 6), "expanded"),
])
def test_the_column_major_copy_matches_torchs(shape, view):
    # Odd shapes (tiles cut at both edges), a matrix with gaps between rows, a batch that is not the outer
    # dim, an empty one and an expanded one: the same values as torch's copy, column-major, the batch
    # stride of an expanded input kept 0 (one copy).
    if view == "strided":
        t = torch.randn(shape)[:, :, 1, :]  # rows 3 * 9 apart
    elif view == "batch-last":
        t = torch.randn(shape[1], shape[2], shape[0]).permute(2, 0, 1)  # strides (1, 67 * 3, 3)
    elif view == "expanded":
        t = torch.randn(1, *shape[1:]).expand(shape)
    else:
        t = torch.randn(shape)
    got = products.column_major(t)
    want = t.transpose(1, 2).contiguous().transpose(1, 2)
    assert torch.equal(got, want)
    assert got.shape == t.shape and got[:1].transpose(1, 2).is_contiguous()
    assert got.stride(0) == 0 if view == "expanded" else got.transpose(1, 2).is_contiguous()


def test_the_column_major_copy_launches_batches_in_chunks(monkeypatch):
    monkeypatch.setattr(gems.ops.blas.products, "MAX_GRID_Y", 2)
    t = torch.randn(5, 33, 17)
    assert torch.equal(products.column_major(t), t)


def _check_column_major_copy(monkeypatch, operand):
    native.invalidate()  # a plan the native layer recorded for a signature would skip gemm.py (on the CPU)
    copied = []
    real = gemm.column_major
    monkeypatch.setattr(gemm, "column_major", lambda t: copied.append(t.stride()) or real(t))
    a, b = torch.randn(3, 19, 21), torch.randn(3, 21, 17)
    operands = [a, b]
    operands[operand] = operands[operand][:1].expand(3, *operands[operand].shape[1:])  # an expanded batch: copied once
    with gems.aten_only():
        want = torch.bmm(operands[0].double(), operands[1].double()).float()
    tolerance = 1e-5 if operand == 0 else 2e-3
    torch.testing.assert_close(torch.bmm(*operands), want, rtol=tolerance, atol=tolerance)
    rows, cols = operands[operand].shape[1:]
    assert copied[:1] == [(0, cols, 1)]  # (then once more for its first batch alone)
    operands[operand] = real(operands[operand])
    assert operands[operand].stride() == (0, 1, rows)
    copied.clear()
    torch.testing.assert_close(torch.bmm(*operands), want, rtol=tolerance, atol=tolerance)
    assert copied == []  # already column-major


def test_product_perf_inputs_declare_k_as_the_reduction_size():
    # gems-perf's check scales the fp32 tolerance by sqrt(reduction_size): without K there, a correct fp32
    # product at K = 8192 (as accurate as cuBLAS's own mm) was reported as a mismatch on the H100.
    from gems.testing.samples_blas import perf_inputs

    shapes = {"mm": (3, 40, 5), "bmm": (2, 3, 40, 5), "addmm": (3, 40, 5), "baddbmm": (2, 3, 40, 5),
              "mv": (3, 40), "addmv": (3, 40), "dot": (40,)}
    for kind, shape in shapes.items():
        sample = perf_inputs(kind)(shape, torch.float32, "cpu").built()
        assert sample.reduction_size == 40, kind

