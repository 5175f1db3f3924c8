"""The warm-vs-cold check (issue #13): what gems computed must repeat bit for bit in the second call;
what ATen computed outside gems (a backward's scatter_add, nondeterministic on CUDA) is judged against
the oracle instead. Interpreter vendor."""

import pytest
import torch

import gems
from gems.runtime import registration
from gems.spec import OpSpec
from gems.testing import proof
from gems.testing.cases import Case
from gems.testing.conformance import run_case
from gems.testing.samples import unary_samples


@pytest.fixture(autouse=True)
def _restore_registration():
    previous = registration.snapshot()
    yield
    registration.apply(previous, gems.vendor().dispatch_key)


def test_cummax_gradient_is_known_as_computed_by_aten():
    gems.enable(include=["cummax"])
    assert "scatter_add" not in registration.registered_ops()  # cummax's backward formula: ATen's scatter_add
    x = torch.randn(5, 7, requires_grad=True)
    by_aten = proof.AtenComputed()
    with by_aten:
        values, indices = torch.cummax(x, 1)
        (grad,) = torch.autograd.grad(values, x, torch.randn(5, 7))
    assert registration.gems_calls["cummax"] > 0
    assert not by_aten.computed(values) and not by_aten.computed(indices)
    assert by_aten.computed(grad)


def test_marks_follow_values_through_gems_operators():
    gems.enable(include=["abs", "mul"])
    x = torch.randn(9)
    by_aten = proof.AtenComputed()
    with by_aten:
        by_gems = torch.abs(x)
        noise = torch.rand(9)  # ATen computes it
        scaled = torch.mul(by_gems, noise)  # gems computes it, from what ATen computed
    assert not by_aten.computed(by_gems) and by_aten.computed(noise) and by_aten.computed(scaled)


def _abs_spec(call, **declared):
    return OpSpec(name="abs", family="pointwise", impls={"abs": gems.ops.get("abs").impls["abs"]}, call=call,
                  samples=unary_samples(), dtypes=(torch.float32,), **declared)


def _run(call, **declared):
    gems.enable(include=["abs", "mul", "add"])
    spec = _abs_spec(call, **declared)
    return run_case(spec, Case("abs", torch.float32, "contiguous"), "cpu", True, "interpreter", {})


def _calls_numbered(body):
    """The case calls the operator as ATen (1), gems cold (2), gems warm (3), then the float64 oracle (4)."""
    calls = []

    def call(x):
        calls.append(x)
        return body(x, len(calls))

    return call


def test_a_nondeterministic_aten_output_is_judged_against_the_oracle_not_bitwise():
    # ATen's part differs by about one ulp in the warm call: within tolerance, not bit-identical.
    result = _run(_calls_numbered(lambda x, n: torch.abs(x) * (torch.rand_like(x) * (2e-7 if n == 3 else 0) + 1)))
    assert result.status == "pass", result.message


def test_a_wrong_warm_aten_output_still_fails():
    result = _run(_calls_numbered(lambda x, n: torch.abs(x) * (torch.rand_like(x) * (1e-2 if n == 3 else 0) + 1)))
    assert result.status == "fail"
    assert "warm (second) call (computed by ATen)" in result.message


def test_a_gems_output_that_changes_in_the_warm_call_fails_bitwise():
    # gems computes every value here; the warm call's input is one ulp off: bitwise, that is a difference.
    result = _run(_calls_numbered(lambda x, n: torch.abs(x * (1 + 2**-23) if n == 3 else x * 1.0)))
    assert result.status == "fail"
    assert "the warm (second) call differs from the cold (first) call" in result.message


ATOMIC_ORDER = {"contiguous": "float atomics add in the order threads arrive"}


def test_a_declared_run_to_run_difference_is_judged_against_the_oracle():
    # bincount's float weights: gems' own sum differs in its last bits between calls, as ATen's does on CUDA.
    result = _run(_calls_numbered(lambda x, n: torch.abs(x * (1 + 2**-23) if n == 3 else x * 1.0)),
                  varies_between_runs=ATOMIC_ORDER)
    assert result.status == "pass", result.message


def test_a_declared_run_to_run_difference_beyond_tolerance_still_fails():
    result = _run(_calls_numbered(lambda x, n: torch.abs(x * 1.01 if n == 3 else x * 1.0)),
                  varies_between_runs=ATOMIC_ORDER)
    assert result.status == "fail"
    assert "declared to vary between runs: float atomics" in result.message
