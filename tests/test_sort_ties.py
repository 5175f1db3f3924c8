"""Sample.tie_check: index outputs whose order among equal values is unspecified (unstable sort, topk)
are judged as valid answers, not compared with the oracle's indices (interpreter vendor)."""

from dataclasses import replace

import pytest
import torch

import gems
from gems import ops
from gems.runtime import registration
from gems.testing.cases import Case
from gems.testing.conformance import run_case
from gems.testing.samples_sort import tie_check


@pytest.fixture(autouse=True)
def _restore_registration():
    previous = registration.snapshot()
    yield
    registration.apply(previous, gems.vendor().dispatch_key)


def test_any_order_of_ties_is_valid_and_wrong_indices_are_named():
    x = torch.tensor([[1.0, -0.0, 1.0, 0.0]])
    values = torch.tensor([[-0.0, 0.0, 1.0, 1.0]])
    check = tie_check(1, permutation=True)
    assert check((x,), {}, [values, torch.tensor([[1, 3, 0, 2]])]) == ""
    assert check((x,), {}, [values, torch.tensor([[1, 3, 2, 0]])]) == ""  # the other order of the tied 1s
    assert "not the input element" in check((x,), {}, [values, torch.tensor([[3, 1, 0, 2]])])  # zeros' signs
    assert "outside" in check((x,), {}, [values, torch.tensor([[1, 3, 0, 4]])])
    assert "dtypes" in check((x,), {}, [values, torch.tensor([[1, 3, 0, 2]], dtype=torch.int32)])


def test_topk_indices_must_be_distinct():
    x = torch.tensor([[2.0, 2.0, 1.0]])
    check = tie_check(1, permutation=False)
    assert check((x,), {}, [torch.tensor([[2.0, 2.0]]), torch.tensor([[1, 0]])]) == ""
    assert "twice" in check((x,), {}, [torch.tensor([[2.0, 2.0]]), torch.tensor([[0, 0]])])


def test_unstable_sort_indices_are_judged_by_the_tie_check_only():
    spec = ops.get("sort")
    registration.apply(gems._implementation_table(include=["sort"]), gems.vendor().dispatch_key)

    def rejecting(dtype, device, quick):
        return [replace(s, tie_check=lambda args, kwargs, outs: "rejected") if s.tie_check else s
                for s in spec.samples(dtype, device, quick)]

    strict = replace(spec, samples=rejecting)
    unstable = run_case(spec, Case("sort", torch.float32, "unstable-specials"), "cpu", True, "interpreter", {})
    rejected = run_case(strict, Case("sort", torch.float32, "unstable-specials"), "cpu", True, "interpreter", {})
    stable = run_case(strict, Case("sort", torch.float32, "stable-specials"), "cpu", True, "interpreter", {})
    assert unstable.status == "pass", unstable.message
    assert rejected.status == "fail" and "output 1: rejected" in rejected.message
    assert stable.status == "pass", stable.message  # no tie_check there: indices compared exactly
