"""The conformance harness hands operators what the samples built, and derives the samples every
declaration needs (interpreter vendor): storage offsets and aliasing kept, a wrong-dtype out= per out
overload, the backward under every forward keyword, a call that changes only a Python number."""

import pytest
import torch

import gems
from gems import ops
from gems.ops.pointwise.add import add_op
from gems.ops.pointwise.isnan import isnan_op
from gems.runtime import registration
from gems.spec import OpSpec, Sample
from gems.testing.cases import Case, copy_args, oracle_dtype
from gems.testing.conformance import run_case
from gems.testing.samples_harness import harness_samples, numbers_changed


@pytest.fixture(autouse=True)
def _restore_registration():
    previous = registration.snapshot()
    yield
    registration.apply(previous, gems.vendor().dispatch_key)


def _serve(overload, fn, owner):
    gems.enable()
    table = registration.snapshot()
    table[overload] = (fn, table[overload][1], owner)
    registration.apply(table, gems.vendor().dispatch_key)


def _run(spec, variant, dtype=torch.float32):
    return run_case(spec, Case(spec.name, dtype, variant), "cpu", True, "interpreter", {}, repro="pytest ...")


def test_copies_keep_offsets_strides_and_aliasing():
    base = torch.randn(5, 6)
    args = (base[1:], base, torch.randn(6).expand(4, 6), torch.randn(20).as_strided((4, 4), (2, 1)), 3)
    for copies in (copy_args(args), copy_args(args, "cpu", oracle_dtype)):
        view, whole, expanded, overlapping, number = copies
        assert view.storage_offset() == 6 and view.untyped_storage().data_ptr() == whole.untyped_storage().data_ptr()
        assert expanded.stride() == (0, 1) and overlapping.stride() == (2, 1) and number == 3
        assert torch.equal(view.float(), base[1:]) and torch.equal(overlapping.float(), args[3])
        assert whole.untyped_storage().data_ptr() != base.untyped_storage().data_ptr()
    assert copy_args(args, "cpu", oracle_dtype)[0].dtype == torch.float64


def test_an_operator_gets_a_view_with_its_offset():
    seen = []

    def abs_noting_offsets(self):
        seen.append(self.storage_offset())
        return ops.get("abs").impls["abs"](self)

    def samples(dtype, device, quick):
        return [Sample("offset-view", lambda: (torch.randn(4, 5, dtype=dtype, device=device)[1:],))]

    spec = OpSpec(name="abs", family="pointwise", impls={"abs": abs_noting_offsets}, call=torch.abs,
                  samples=samples, dtypes=(torch.float32,))
    _serve("abs", abs_noting_offsets, "abs")
    assert _run(spec, "offset-view").status == "pass"
    assert seen and set(seen) == {5}


def test_an_implementation_that_keeps_the_first_number_fails():
    """A stale scalar (what a native plan keyed without the number would replay) fails the changed call."""
    first_alpha = []

    def add_keeping_the_first_alpha(self, other, alpha=1):
        first_alpha.append(alpha)
        return add_op(self, other, first_alpha[0])

    _serve("add.Tensor", add_keeping_the_first_alpha, "add")
    result = _run(ops.get("add"), "contiguous")
    assert result.status == "fail" and "with its numbers changed (2 -> 3)" in result.message
    gems.enable()
    assert _run(ops.get("add"), "contiguous").status == "pass"


def test_a_changed_number_that_makes_the_call_invalid_is_refused_by_the_oracle_first():
    """dim -1 -> 0 puts the indices out of range: the CPU oracle refuses the call before ATen runs it on the
    device (on a GPU, ATen's kernel would assert there and take the worker's CUDA context with it)."""
    calls = []

    def index_select_noting(x, dim, index):
        calls.append((dim, x.dtype))
        return torch.index_select(x, dim, index)

    def samples(dtype, device, quick):
        return [Sample("dim-last", lambda: (torch.randn(3, 5, 7, dtype=dtype, device=device), -1,
                                            torch.tensor([6, 0], device=device)))]

    spec = OpSpec(name="index_select", family="indexing", impls=ops.get("index_select").impls,
                  call=index_select_noting, samples=samples, dtypes=(torch.float32,))
    gems.enable()
    assert _run(spec, "dim-last").status == "pass"
    assert (0, torch.float64) in calls and (0, torch.float32) not in calls


def test_numbers_are_changed_but_not_zeros_bools_or_infinities():
    sample = Sample("s", (torch.ones(2), 2, 0.5, 0.0, True, float("inf")), {"alpha": 3, "dropout_p": 0.0})
    changed, what = numbers_changed(sample)
    assert changed.args[1:] == (3, 0.75, 0.0, True, float("inf")) and changed.kwargs == {"alpha": 4, "dropout_p": 0.0}
    assert what == "2 -> 3, 0.5 -> 0.75, 3 -> 4"
    assert numbers_changed(Sample("s", (torch.ones(2), 0), {"flag": False})) is None


def test_every_out_overload_gets_a_wrong_dtype_sample_that_gems_must_refuse():
    def variants(dtype):
        return {s.variant for s in harness_samples(ops.get("div"), dtype, "meta", True)}

    assert {"wrong-out-dtype-div.out", "wrong-out-dtype-div.out_mode"} <= variants(torch.float32)
    assert not any(v.startswith("wrong-out") for v in variants(torch.int32))
    assert _run(ops.get("isnan"), "wrong-out-dtype").status == "pass"
    _serve("isnan.out", lambda self, *, out: isnan_op(self, out=out), "isnan")  # any out dtype accepted
    result = _run(ops.get("isnan"), "wrong-out-dtype")
    assert result.status == "fail" and "ATen raises RuntimeError" in result.message


def test_the_backward_runs_under_every_forward_keyword():
    samples = {s.variant: s for s in harness_samples(ops.get("scaled_dot_product_attention"), torch.float32, "meta",
                                                     True)}
    assert samples["grad-scale"].grad and samples["grad-scale"].kwargs["scale"] == 0.3


def test_a_keyword_that_picks_another_overload_is_expected_in_the_backward():
    """round(decimals=) dispatches round.decimals: the derived gradient case expects that overload."""
    samples = {s.variant: s for s in harness_samples(ops.get("round"), torch.float32, "meta", True)}
    assert samples["grad-decimals"].expects == ("round.decimals",)
    gems.enable()
    assert _run(ops.get("round"), "grad-decimals").status == "pass"


def test_a_derived_gradient_keyword_the_call_does_not_take_is_a_harness_error():
    """Both sides would raise TypeError and the case would pass without computing anything."""

    def samples(dtype, device, quick):
        return [Sample("keyword", lambda: (torch.randn(3, dtype=dtype, device=device),), {"decimals": 2}),
                Sample("grad", lambda: (torch.randn(3, dtype=dtype, device=device).requires_grad_(),), grad=True)]

    spec = OpSpec(name="neg", family="pointwise", impls=ops.get("neg").impls, call=torch.neg, samples=samples,
                  dtypes=(torch.float32,))
    assert "grad-decimals" in {s.variant for s in harness_samples(spec, torch.float32, "cpu", True)}
    gems.enable()
    result = _run(spec, "grad-decimals")
    assert result.status == "error" and "harness" in result.message and "decimals" in result.message
