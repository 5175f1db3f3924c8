"""The launch memo of conformance's warm call (gems/testing/launch_memo.py): a warm launch identical to a
cold one in every byte it is given is served from the memo and writes what the interpreter writes; any
difference (input bytes, an output's bytes before a read-modify-write kernel, aliasing, a scalar's bits)
misses and runs. Interpreter vendor."""

import pytest
import torch
import triton
import triton.language as tl

import gems
from gems import ops
from gems.runtime import launch, registration
from gems.runtime.launch import Launcher
from gems.testing import launch_memo
from gems.testing.cases import Case
from gems.testing.conformance import run_case

pytestmark = pytest.mark.skipif(gems.vendor().name != "interpreter", reason="memoises interpreter launches")


@triton.jit
def _axpy_accumulate_kernel(x_ptr, y_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    """out += alpha * x + y: it reads what it writes."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    acc = tl.load(out_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, acc + alpha * x + y, mask=mask)


_axpy = Launcher(_axpy_accumulate_kernel)
N, BLOCK = 37, 16


def _inputs(seed):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(N, generator=g) for _ in range(3)]


def _launch(x, y, out, alpha=0.5):
    _axpy((triton.cdiv(N, BLOCK),), x, y, out, alpha, N, BLOCK)
    return out


def _interpreted(x, y, out, alpha=0.5):
    """What the interpreter computes, with no memo, on copies."""
    previous, launch.memo = launch.memo, None
    try:
        return _launch(x.clone(), y.clone(), out.clone(), alpha)
    finally:
        launch.memo = previous


def _cold_then_warm(cold, warm):
    """Run ``cold()`` while a memo records and ``warm()`` while it replays; returns (memo, warm's result)."""
    with launch_memo.case() as memo:
        assert memo is not None and launch.memo is memo
        cold()
        with memo.replay():
            result = warm()
    assert launch.memo is None
    return memo, result


def test_an_identical_warm_launch_hits_and_writes_what_the_interpreter_writes():
    x, y, out = _inputs(0)
    expected = _interpreted(x, y, out)
    memo, got = _cold_then_warm(lambda: _launch(x.clone(), y.clone(), out.clone()),
                                lambda: _launch(x.clone(), y.clone(), out.clone()))
    assert (memo.recorded, memo.hits, memo.misses) == (1, 1, 0)
    assert torch.equal(got, expected)
    assert not torch.equal(got, out)  # the kernel wrote: the hit is not the untouched buffer


@pytest.mark.parametrize("changed", ["x", "y", "out"])
def test_a_warm_launch_with_one_different_input_byte_misses_and_runs(changed):
    x, y, out = _inputs(1)
    warm = {"x": x.clone(), "y": y.clone(), "out": out.clone()}
    warm[changed].view(torch.int32)[N // 2] ^= 1 << 20  # one bit of one element (the output too: it is read)
    expected = _interpreted(warm["x"], warm["y"], warm["out"])
    memo, got = _cold_then_warm(lambda: _launch(x.clone(), y.clone(), out.clone()),
                                lambda: _launch(warm["x"], warm["y"], warm["out"]))
    assert (memo.hits, memo.misses) == (0, 1)
    assert torch.equal(got, expected)
    assert not torch.equal(got, _interpreted(x, y, out))  # the cold launch's bytes would have been wrong


def _autotuned_axpy(*blocks):
    return Launcher(triton.autotune([triton.Config({"BLOCK": b}) for b in blocks], key=["n"])(_axpy_accumulate_kernel))


def _by_block(meta):
    return (triton.cdiv(N, meta["BLOCK"]),)


def test_a_one_config_autotuned_launch_is_keyed_by_its_config_and_grid():
    # The interpreter's autotuners hold one config: Triton runs exactly it, so the launch is memoised.
    tuned, (x, y, out) = _autotuned_axpy(16), _inputs(4)
    expected = _interpreted(x, y, out)
    with launch_memo.case() as memo:
        cold = out.clone()
        tuned(_by_block, x.clone(), y.clone(), cold, 0.5, N)
        with memo.replay():
            warm = out.clone()
            tuned(_by_block, x.clone(), y.clone(), warm, 0.5, N)
            other = out.clone()  # a grid function that gives fewer programs: another launch, a miss
            tuned(lambda meta: (1,), x.clone(), y.clone(), other, 0.5, N)
    assert (memo.recorded, memo.hits, memo.misses, memo.unkeyed) == (1, 1, 1, 0)
    assert torch.equal(cold, expected) and torch.equal(warm, expected)
    assert torch.equal(other[:BLOCK], expected[:BLOCK]) and torch.equal(other[BLOCK:], out[BLOCK:])


def test_an_autotuner_with_several_configs_or_a_config_hook_is_not_keyed():
    x, y, out = _inputs(5)
    args = (x, y, out, 0.5, N)
    assert launch_memo._key(_autotuned_axpy(16, 32).kernel, _by_block, args, {}) is None  # a benchmark chooses
    hooked = _autotuned_axpy(16).kernel
    hooked.configs[0].pre_hook = lambda nargs: None
    assert launch_memo._key(hooked, _by_block, args, {}) is None
    assert launch_memo._key(_autotuned_axpy(16).kernel, _by_block, args, {}) is not None


def test_a_different_scalar_misses_to_the_bit():
    x, y, out = _inputs(2)
    memo, got = _cold_then_warm(lambda: _launch(x.clone(), y.clone(), out.clone(), 0.0),
                                lambda: _launch(x.clone(), y.clone(), out.clone(), -0.0))
    assert (memo.hits, memo.misses) == (0, 1)
    assert torch.equal(got, _interpreted(x, y, out, -0.0))


def test_aliasing_is_part_of_the_key():
    # f(x, x) and f(x, a copy of x) read the same bytes but are different launches; so are an output that
    # is an input and one that is a copy of it.
    x, _, out = _inputs(3)

    def same(a):
        return _launch(a, a, out.clone())

    def copied(a):
        return _launch(a, a.clone(), out.clone())

    memo, got = _cold_then_warm(lambda: same(x.clone()), lambda: copied(x.clone()))
    assert (memo.hits, memo.misses) == (0, 1)
    assert torch.equal(got, _interpreted(x, x, out))

    def in_place(a):
        return _launch(a, a.clone(), a)

    def separate(a):
        return _launch(a, a.clone(), a.clone())

    memo, got = _cold_then_warm(lambda: in_place(x.clone()), lambda: separate(x.clone()))
    assert (memo.hits, memo.misses) == (0, 1)
    assert torch.equal(got, _interpreted(x, x, x))  # three separate copies of x


def test_a_view_at_another_offset_misses():
    x, y, out = _inputs(4)
    big = torch.cat([x, x])  # the same values at offset 0 and N: same bytes in the view, another storage offset
    memo, _ = _cold_then_warm(lambda: _launch(big[:N], y.clone(), out.clone()),
                              lambda: _launch(big.clone()[N:], y.clone(), out.clone()))
    assert (memo.hits, memo.misses) == (0, 1)


def test_uninitialized_outputs_are_filled_alike_while_a_memo_is_on():
    with launch_memo.case():
        a, b = torch.empty(N), torch.empty(N, dtype=torch.int64)
        assert bool(torch.isnan(a).all()) and bool((b == b[0]).all())
    # the allocator is as it was afterwards: not asserted on values (fresh memory may be anything)


def test_nothing_is_memoised_outside_a_case_or_when_turned_off(monkeypatch):
    assert launch.memo is None
    monkeypatch.setenv("GEMS_LAUNCH_MEMO", "0")
    with launch_memo.case() as memo:
        assert memo is None and launch.memo is None


@pytest.fixture
def _restore_registration():
    previous = registration.snapshot()
    yield
    registration.apply(previous, gems.vendor().dispatch_key)


@pytest.mark.usefixtures("_restore_registration")
@pytest.mark.parametrize("op, variant", [("add", "noncontiguous-strided"), ("add", "out"), ("softmax", "dim0")])
def test_conformance_serves_the_warm_call_from_the_memo(op, variant):
    # noncontiguous-strided: the sample's storage has gaps no kernel writes (the fill makes them alike).
    gems.enable(include=[op])
    spec = ops.get(op)
    before = dict(launch_memo.totals)
    result = run_case(spec, Case(op, torch.float32, variant), "cpu", True, "interpreter", {})
    assert result.status == "pass", result.message
    hits = launch_memo.totals["hits"] - before.get("hits", 0)
    assert hits == result.launches and hits > 0  # every launch of the warm call was the cold call's
