"""The indexing family (gems/ops/indexing): the walk planner, the index checks on each side (host check
under the interpreter, masked accesses and device asserts for compiled kernels), the native layer's
plans, and the set-valued check of duplicate writes."""

import os
import shutil

import pytest
import torch

import gems
from gems import native
from gems.ops.indexing import segments, shared, walk
from gems.ops.indexing.masked_scatter import _masked_scatter_kernel
from gems.runtime import launch, registration
from gems.runtime.registration import Fallback
from gems.testing.samples_indexing import one_of_written, scatter_targets


@pytest.fixture
def enabled():
    previous = registration.snapshot()
    gems.enable()
    yield
    registration.apply(previous, gems.vendor().dispatch_key)


@pytest.fixture
def compiled_side(monkeypatch):
    """Run as where kernels are compiled: no host check of index values (the kernels mask and assert)."""
    monkeypatch.setattr(shared, "_interpreted", [False])


def test_walk_merges_contiguous_dims_and_keeps_an_indexed_dim_apart():
    # A contiguous (2, 3, 4, 5) tensor walked against itself: one dim.
    strides = (60, 20, 5, 1)
    plan = shared.plan_walk((2, 3, 4, 5), strides, strides)
    assert (plan.n_rows, plan.n_cols) == (1, 120)
    # The same with dim 1 indexed (src stride 0 there): (2), (3), (4 * 5) stay apart.
    plan = shared.plan_walk((2, 3, 4, 5), (60, 0, 5, 1), strides)
    assert (plan.n_rows, plan.n_cols, plan.size1, plan.size2) == (6, 20, 2, 3)
    assert plan.strides[0] == (0, 60, 0, 1)
    with pytest.raises(Fallback):
        shared.plan_walk((2, 2, 2, 2, 2), (1, 0, 1, 0, 1), (16, 8, 4, 2, 1))


def test_kernels_that_read_indices_assert_on_the_device():
    for kernel in (walk._gather_kernel, walk._scatter_kernel, _masked_scatter_kernel, segments._link_kernel,
                   segments._add_kernel):
        # jit(debug=True): a JITFunction's option, an InterpretedFunction's keyword (which it ignores)
        assert getattr(kernel, "debug", None) or getattr(kernel, "kwargs", {}).get("debug"), kernel


def test_out_of_range_raises_atens_error_before_any_launch(enabled, monkeypatch):
    x = torch.randn(5, 3)  # before the spy: gems serves randn too (the random family)
    launches = []
    monkeypatch.setattr(launch.Launcher, "_launch", lambda self, *args: launches.append(self))
    with pytest.raises(IndexError, match="index out of range in self"):
        torch.index_select(x, 0, torch.tensor([0, 5]))
    with pytest.raises(RuntimeError, match="index -1 is out of bounds for dimension 1 with size 3"):
        torch.gather(x, 1, torch.tensor([[0, -1]]))
    with pytest.raises(IndexError, match="index 7 is out of bounds"):
        x[torch.tensor([7])] = 1.0
    assert launches == []


def test_compiled_kernels_mask_an_index_out_of_range(enabled, compiled_side):
    # With no host check (a GPU, where the device assert stops the kernel), nothing outside a tensor is read
    # or written: the gather of a bad row gives zeros there, the scatter leaves self as it was.
    table = torch.arange(12.0).reshape(4, 3)
    rows = torch.index_select(table, 0, torch.tensor([1, 9, -3]))
    assert torch.equal(rows, torch.tensor([[3.0, 4.0, 5.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]))
    target = torch.zeros(4, 3)
    target.scatter_add_(0, torch.tensor([[2, 100, 1]]), torch.ones(1, 3))
    assert torch.equal(target.sum(0), torch.tensor([1.0, 0.0, 1.0]))


@pytest.mark.skipif(shutil.which(os.environ.get("CXX", "c++")) is None, reason="no C++ compiler for the native layer")
def test_calls_replay_natively_where_kernels_are_compiled(enabled, compiled_side):
    native.invalidate()
    gems.reset_counts()
    table, ids = torch.randn(16, 8), torch.tensor([3, 3, 15, 0])
    calls = {
        "index_select": lambda: torch.index_select(table, 0, ids),
        "embedding": lambda: torch.embedding(table, ids),
        "gather": lambda: torch.gather(table, 1, ids.reshape(1, 4)),
        "scatter_add": lambda: torch.scatter_add(table, 1, ids.reshape(1, 4), torch.ones(1, 4)),
        "index_add": lambda: torch.index_add(table, 0, ids, torch.ones(4, 8)),
    }
    for overload, call in calls.items():
        first, second = call(), call()
        assert torch.equal(first, second)
        assert native.call_counts().get(overload, 0) == 1, (overload, native.python_reasons().get(overload))


@pytest.mark.skipif(shutil.which(os.environ.get("CXX", "c++")) is None, reason="no C++ compiler for the native layer")
def test_advanced_indexing_replays_natively_where_kernels_are_compiled(enabled, compiled_side):
    # index.Tensor's and index_put's indices are an optional-tensor list (Tensor?[]), keyed item by item: a loop
    # of the same signature replays after its first call, a None gap (x[:, cols]) included.
    native.invalidate()
    gems.reset_counts()
    table = torch.randn(16, 8)
    for _ in range(3):
        rows, cols = torch.randint(-16, 16, (5,)), torch.randint(0, 8, (3,))
        values = torch.randint(-4, 5, (5, 8)).float()  # small integers: exact sums in any order
        with registration.aten_only():
            expected = (table[rows], table[:, cols], table.clone().index_put_((rows,), values, accumulate=True))
        x = table.clone()
        got = (x[rows], x[:, cols], x.index_put_((rows,), values, accumulate=True))
        for g, e in zip(got, expected):
            assert torch.equal(g, e)
    counts = native.call_counts()
    assert counts.get("index.Tensor", 0) == 4, native.python_reasons().get("index.Tensor")
    assert counts.get("index_put_", 0) == 2, native.python_reasons().get("index_put_")
    # Index lists of a growing length: a size-generic plan serves the lengths after the first two.
    for n in range(9, 17):
        ids = torch.randint(0, 16, (n,))
        with registration.aten_only():
            expected = table[ids]
        assert torch.equal(table[ids], expected)
    assert native.generic_counts().get("index.Tensor", 0) == 6, native.python_reasons().get("index.Tensor")


@pytest.mark.skipif(shutil.which(os.environ.get("CXX", "c++")) is None, reason="no C++ compiler for the native layer")
def test_the_interpreters_host_check_keeps_calls_in_python(enabled):
    native.invalidate()
    gems.reset_counts()
    table, ids = torch.randn(16, 8), torch.tensor([3, 1])
    torch.index_select(table, 0, ids)
    torch.index_select(table, 0, ids)
    assert native.call_counts().get("index_select", 0) == 0
    assert "checked on the host" in native.python_reasons()["index_select"]


@pytest.mark.parametrize("scan_max", [0, 512], ids=["chained", "scanned"])
def test_sums_of_indexed_rows_chained_and_scanned(enabled, monkeypatch, scan_max):
    # Many tokens take the chained path (heads and links), few the scan; both add every duplicate once, with
    # negative indices counting from the end (index_put) and bool summing as a logical or.
    monkeypatch.setattr(segments, "SCAN_MAX", scan_max)
    ids = torch.tensor([3, -1, 0, 3, 4, 3, -5, 2, 3])
    with registration.aten_only():
        rows = torch.randn(9, 7).mul(4).round()  # small integers: exact in bf16 sums of any order
        self = torch.randn(5, 7).mul(4).round()
        expected = self.double().index_put([ids], rows.double(), accumulate=True)
    got = torch.ops.aten.index_put(self.bfloat16(), [ids], rows.bfloat16(), True)
    assert torch.equal(got.double(), expected)
    flags, marks = torch.zeros(5, 3, dtype=torch.bool), torch.tensor([[True, False, False]] * 4)
    got = torch.index_add(flags, 0, torch.tensor([1, 1, 4, 1]), marks)
    assert got[:, 0].tolist() == [False, True, False, False, True] and not got[:, 1:].any()


@pytest.mark.parametrize("scan_max", [0, 512], ids=["sorted", "scanned"])
def test_embedding_backward_sorted_and_scanned(enabled, monkeypatch, scan_max):
    # Few tokens take one launch that scans all indices, many the sorted sums: both add each row's tokens in
    # token order (the same bits), skip padding_idx, divide by the count with scale_grad_by_freq, and ignore
    # indices out of range.
    monkeypatch.setattr(segments, "SCAN_MAX", scan_max)
    ids = torch.tensor([[3, 0, 3, 9], [5, 3, -2, 0]])
    for padding, scale in ((-1, False), (3, True)):
        with registration.aten_only():
            grad = torch.randn(2, 4, 37).mul(4).round()  # small integers: exact in sums of any order
            kept = (ids >= 0) & (ids < 7) & (ids != padding)
            want = torch.zeros(7, 37, dtype=torch.float64).index_add_(0, ids[kept], grad[kept].double())
            if scale:
                want /= torch.bincount(ids[kept], minlength=7).clamp(min=1)[:, None]
        got = torch.ops.aten.embedding_dense_backward(grad, ids, 7, padding, scale)
        torch.testing.assert_close(got.double(), want, rtol=1e-6, atol=0)


@pytest.mark.parametrize("n", [5000, 9000], ids=["one-program", "counts-and-cumsum"])
def test_block_ends_of_few_and_many_blocks(enabled, n):
    # Masks of up to FEW_BLOCKS blocks get their ends from one program, longer ones from counts and a cumsum.
    from gems.ops.compaction.scan_scatter import BLOCK, FEW_BLOCKS, device_block_ends

    assert (n <= FEW_BLOCKS * BLOCK) == (n == 5000)
    with registration.aten_only():
        flags = torch.rand(n) < 0.3
        expected = torch.nn.functional.pad(flags, (0, -n % BLOCK)).view(-1, BLOCK).sum(1).cumsum(0)
    assert torch.equal(device_block_ends(flags.view(torch.uint8), False), expected)


def test_one_of_written_accepts_any_written_value_and_nothing_else():
    check = one_of_written(scatter_targets)
    self, index, src = torch.zeros(3), torch.tensor([1, 1, 2]), torch.tensor([5.0, 6.0, 7.0])
    args = (self, 0, index, src)
    assert check(args, {}, [torch.tensor([0.0, 5.0, 7.0])]) == ""
    assert check(args, {}, [torch.tensor([0.0, 6.0, 7.0])]) == ""
    assert "none of the values" in check(args, {}, [torch.tensor([0.0, 7.0, 7.0])])
    assert "not written to" in check(args, {}, [torch.tensor([1.0, 5.0, 7.0])])
