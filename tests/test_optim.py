"""The optimizer family (gems/ops/optim/) beyond what its conformance samples reach: rows that span several
programs and a deep binary search, the device tables' cache and layout, the launch memo leaving table
kernels alone, ATen's errors that no conformance sample can show on every device, the strided fallback,
and torch.optim's optimizers stepping through gems. Interpreter vendor."""

import pytest
import torch

import gems
from gems.ops.optim import foreach, foreach_add, foreach_kernels, fused_adam
from gems.ops.optim import multi_tensor as mt
from gems.runtime import device_tables
from gems.testing import launch_memo

pytestmark = pytest.mark.skipif(gems.vendor().name != "interpreter", reason="CPU tensors: the interpreter vendor")


@pytest.fixture
def served():
    with gems.use_gems(include=["foreach_add", "foreach_mul", "foreach_addcmul", "foreach_lerp", "foreach_sqrt",
                                "foreach_div", "foreach_zero", "foreach_maximum", "foreach_addcdiv", "foreach_neg",
                                "fused_adamw", "fused_sgd"]):
        gems.reset_counts()
        yield


def _aten(fn):
    with gems.aten_only():
        return fn()


def test_a_row_of_several_chunks_among_many_rows(served):
    # 21 rows (a 5-step binary search); the long row spans three programs, its last one a masked tail.
    g = torch.Generator().manual_seed(0)
    shapes = [(2 * mt.CHUNK + 5,)] + [(i + 1, 3) for i in range(20)]
    xs, ys, zs = ([torch.randn(s, generator=g) for s in shapes] for _ in range(3))
    want = _aten(lambda: torch._foreach_addcmul([x.clone() for x in xs], ys, zs, 0.5))
    got = torch._foreach_addcmul(xs, ys, zs, 0.5)
    assert gems.call_counts()["gems"]["_foreach_addcmul.Scalar"] == 1
    for a, b in zip(got, want):
        torch.testing.assert_close(a, b, rtol=1.3e-6, atol=1e-6)


def test_table_layout():
    table, programs = mt.table([[7, 8], [9, 10], [11, 12]], [5, mt.CHUNK + 1, 3], "cpu")
    # first programs of the rows, then each row: numel and its words
    assert table.tolist() == [0, 1, 3, 5, 7, 8, mt.CHUNK + 1, 9, 10, 3, 11, 12]
    assert programs == 4
    assert [mt.steps_for(n) for n in (1, 2, 3, 4, 5, 201)] == [0, 1, 2, 2, 3, 8]


def test_tables_are_cached_by_their_contents(served):
    xs = [torch.randn(5), torch.randn(3, 2)]
    torch._foreach_mul_(xs, 2.0)
    cached = len(device_tables._tables)
    torch._foreach_mul_(xs, 3.0)  # the same rows (the scalar is a kernel argument): the same table
    assert len(device_tables._tables) == cached
    torch._foreach_mul_([torch.randn(5)], 2.0)
    assert len(device_tables._tables) == cached + 1


def test_the_launch_memo_never_keys_a_kernel_that_reads_a_table():
    for kernel in (foreach_kernels.foreach_kernel, foreach_kernels.values_kernel, fused_adam._adam_kernel):
        assert getattr(kernel, mt.ADDRESS_TABLE)
        assert launch_memo._key(kernel, (1,), (torch.zeros(3, dtype=torch.int64), 1), {}) is None


def test_a_row_on_two_devices_is_refused_before_any_launch(monkeypatch):
    launched = []
    monkeypatch.setattr(foreach, "_launch", lambda *a, **k: launched.append(a))
    add_list = foreach_add.impls["_foreach_add_.List"]
    with pytest.raises(RuntimeError, match="same device"):
        add_list([torch.randn(3), torch.randn(2)], [torch.randn(3), torch.randn(2, device="meta")])
    with pytest.raises(RuntimeError, match="same number of tensors"):
        add_list([torch.randn(3), torch.randn(2)], [torch.randn(3)])
    assert not launched


@pytest.mark.parametrize("case", ["grads", "max_exp_avg_sqs"])
def test_fused_adam_lists_of_unequal_length_raise_like_aten(served, case):
    # Not a conformance sample: ATen's CUDA kernel indexes such lists unchecked. gems raises ATen's CPU error.
    def lists():
        params, grads, moments, squares = ([torch.randn(4), torch.randn(3)] for _ in range(4))
        steps = [torch.tensor(1.0), torch.tensor(1.0)]
        if case == "grads":
            grads = grads[:1]
        return params, grads, moments, squares, [], steps

    kwargs = dict(lr=0.1, beta1=0.9, beta2=0.99, weight_decay=0.0, eps=1e-8, amsgrad=case != "grads", maximize=False)
    with pytest.raises(RuntimeError):
        _aten(lambda: torch._fused_adamw_(*lists(), **kwargs))
    with pytest.raises(RuntimeError, match=case):
        torch._fused_adamw_(*lists(), **kwargs)


def test_fused_lists_of_different_strides_raise_like_atens_cuda_kernel(served):
    # Not a conformance sample: ATen's CPU kernel computes them, its CUDA kernel refuses them (gems follows CUDA).
    # Transposed params beside contiguous grads would otherwise be walked in two different orders.
    params = [torch.randn(5, 3).t(), torch.randn(4)]
    grads = [torch.randn(3, 5), torch.randn(4)]
    moments, squares = ([torch.randn(5, 3).t(), torch.randn(4)] for _ in range(2))
    steps = [torch.tensor(1.0), torch.tensor(1.0)]
    with pytest.raises(RuntimeError, match="must have same dtype, device, and layout"):
        torch._fused_adamw_(params, grads, moments, squares, [], steps, lr=0.1, beta1=0.9, beta2=0.99,
                            weight_decay=0.0, eps=1e-8, amsgrad=False, maximize=False)
    with pytest.raises(RuntimeError, match="must have same dtype, device, and layout"):
        torch._fused_sgd_(params, grads, [], weight_decay=0.0, momentum=0.0, lr=0.1, dampening=0.0, nesterov=False,
                          maximize=False, is_first_step=False)


def test_a_strided_row_beyond_four_merged_dimensions_is_atens(served):
    x = torch.randn(4, 4, 4, 4, 4)[::2, ::2, ::2, ::2, ::2]  # five dimensions no merge can join
    want = x * 2.5
    torch._foreach_mul_([x], 2.5)
    torch.testing.assert_close(x, want)
    assert any(overload == "_foreach_mul_.Scalar" for overload, _ in gems.call_counts()["fallback"])


def _params(seed):
    g = torch.Generator().manual_seed(seed)
    params = [torch.nn.Parameter(torch.randn(s, generator=g)) for s in ((13, 17), (5,), (2100,))]
    for p in params:
        p.grad = torch.randn(p.shape, generator=g)
    return params


@pytest.mark.parametrize("make", [
    lambda ps: torch.optim.AdamW(ps, lr=0.01, weight_decay=0.1, fused=True),
    lambda ps: torch.optim.AdamW(ps, lr=0.01, weight_decay=0.1, amsgrad=True, foreach=True),
    lambda ps: torch.optim.SGD(ps, lr=0.05, momentum=0.9, nesterov=True, fused=True),
], ids=["adamw-fused", "adamw-foreach-amsgrad", "sgd-fused-nesterov"])
def test_torch_optim_steps_through_gems_as_through_aten(served, make):
    ours, theirs = _params(1), _params(1)
    opt = make(ours)
    for _ in range(3):
        opt.step()
    opt.zero_grad(set_to_none=False)  # _foreach_zero_
    with gems.aten_only():
        ref = make(theirs)
        for _ in range(3):
            ref.step()
        ref.zero_grad(set_to_none=False)
    for a, b in zip(ours, theirs):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)
        assert torch.count_nonzero(a.grad) == 0
    assert gems.call_counts()["gems"].get("_foreach_zero_") == 1
    assert not gems.call_counts()["fallback"]


# --------------------------------------------------------------------------- the native layer's list helpers

@pytest.fixture
def native_lists():
    gems.enable()  # builds and loads the native layer
    if not gems.native_status()["active"]:
        pytest.skip("the native layer is not built here (no C++ compiler)")


@pytest.mark.usefixtures("native_lists")
def test_the_native_table_of_uniform_lists_is_the_per_row_paths_table():
    a = [torch.randn(5), torch.randn(0), torch.randn(3, 70000), torch.randn(2, 2)]
    b = [torch.randn_like(t) for t in a]
    words = foreach.float64_bits_list([0.5, -1.0, 2.0, 1e300])
    content, programs, n_rows, aligned = mt.uniform_table([a, b], words)
    groups = foreach._row_groups([a], b, words, None)
    ((rows, numels, strided, per_row_aligned),) = groups.values()
    python_words = mt.table(rows, numels, "cpu")[0].tolist()
    assert torch.frombuffer(bytearray(content), dtype=torch.int64).tolist() == python_words
    assert (programs, n_rows, aligned) == (1 + 4 + 1, 3, per_row_aligned) and not strided  # the empty row left out


@pytest.mark.usefixtures("native_lists")
@pytest.mark.parametrize("change", ["dtype", "shape", "transposed", "length", "integer", "empty-lists"])
def test_lists_the_native_check_refuses_take_the_per_row_path(change):
    a = [torch.randn(4, 3), torch.randn(6)]
    b = [t.clone() for t in a]
    if change == "dtype":
        b[1] = b[1].double()
    elif change == "shape":
        b[1] = torch.randn(2, 3)
    elif change == "transposed":
        b[0] = torch.randn(3, 4).t()
    elif change == "length":
        b = b[:1]
    elif change == "integer":
        a, b = [t.int() for t in a], [t.int() for t in b]
    else:
        a, b = [], []
    assert not mt.uniform([a, b]) and mt.uniform_table([a, b], [0] * len(a)) is None
    assert mt.uniform([a, [t.clone() for t in a]]) == (change not in ("integer", "empty-lists"))  # a itself is fine


@pytest.mark.usefixtures("native_lists", "served")
def test_functional_results_of_uniform_lists_are_fresh_tensors_laid_out_as_atens():
    # Allocated by the native layer's list helper: each its own storage, with empty_like's layout (a size-one dim
    # keeps its input's stride), as ATen's CUDA foreach kernels allocate them (its CPU path, an operator per
    # tensor, gives that one a contiguous (4, 1)).
    with gems.aten_only():
        wide_stride = torch.empty_strided((1, 4), (9, 1)).copy_(torch.rand(1, 4))
        a = [torch.rand(3, 5), wide_stride, torch.rand(0), torch.rand(2, 2)]
        b = [torch.rand_like(t) for t in a]
    assert mt.uniform([a, b])
    for call in (lambda: torch._foreach_sqrt(a), lambda: torch._foreach_add(a, b, alpha=2.0)):
        got, expected = call(), _aten(call)
        for g, e in zip(got, expected):
            torch.testing.assert_close(g, e)
        assert [g.stride() for g in got] == [t.stride() for t in a]
        storages = {t.untyped_storage().data_ptr() for t in got if t.numel()}
        assert len(storages) == 3 and not storages & {t.untyped_storage().data_ptr() for t in a + b}
    assert gems.call_counts()["gems"].get("_foreach_sqrt") == gems.call_counts()["gems"].get("_foreach_add.List") == 1
