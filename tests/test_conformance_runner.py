"""The conformance runner catches wrong kernels, fallbacks and error mismatches (interpreter vendor)."""

import pytest
import torch

import gems
from gems import ops
from gems.ops.pointwise.abs import abs_op
from gems.runtime import registration
from gems.spec import OpSpec
from gems.testing.cases import Case, list_cases
from gems.testing.conformance import run_case
from gems.testing.samples import unary_samples

DEVICE = "cpu"


@pytest.fixture(autouse=True)
def _restore_registration():
    previous = registration.snapshot()
    yield
    registration.apply(previous, gems.vendor().dispatch_key)


def _register(table):
    registration.apply({o: (fn, gems.Autograd.disable, "neg") for o, fn in table.items()}, gems.vendor().dispatch_key)


def _neg_spec(**changes):
    fields = dict(name="neg", family="pointwise", impls={"neg": lambda x: x}, call=torch.neg,
                  samples=unary_samples(), dtypes=(torch.float32,))
    fields.update(changes)
    return OpSpec(**fields)


def _run(spec, variant="contiguous", dtype=torch.float32):
    return run_case(spec, Case(spec.name, dtype, variant), DEVICE, True, "interpreter", {}, repro="pytest ...")


def test_a_wrong_kernel_fails_with_a_full_report():
    _register({"neg": abs_op})  # a real Triton kernel, computing the wrong function
    result = _run(ops.get("neg"))
    assert result.status == "fail"
    assert result.max_abs_err > 0 and result.mismatch_pct > 10 and result.max_ulp > 1
    assert "values outside rtol" in result.message
    assert result.shapes == [[13, 17]] and result.strides == [[17, 1]] and result.seed == Case(
        "neg", torch.float32, "contiguous").seed
    assert result.repro


def test_the_right_kernel_passes():
    gems.enable(include=["neg"])
    result = _run(ops.get("neg"))
    assert result.status == "pass" and result.rule == "tolerance", result.message


def test_a_fallback_to_aten_is_not_counted_as_executed():
    def always_falls_back(x):
        raise gems.Fallback("test: not handled")

    _register({"neg": always_falls_back})
    result = _run(_neg_spec())
    assert result.status == "fail"
    assert "not executed by gems" in result.message and "test: not handled" in result.message


def test_deliberate_fallback_is_reported_as_such():
    def always_falls_back(x):
        raise gems.Fallback("test: deliberate")

    _register({"neg": always_falls_back})
    result = _run(_neg_spec(deliberate_fallbacks={"contiguous": "ATen is faster here"}))
    assert result.status == "fallback" and "ATen is faster here" in result.message


def test_known_failures_are_expected_and_turn_red_when_fixed():
    _register({"neg": abs_op})
    spec = _neg_spec(known_failures={("*", "float32", "contiguous"): "tracked in issue 99"})
    assert _run(spec).status == "xfail"
    gems.enable(include=["neg"])
    assert _run(spec).status == "xpass"


def test_a_known_failure_says_its_declared_reason_whatever_failed():
    def always_falls_back(x):
        raise gems.Fallback("test: not handled")

    _register({"neg": always_falls_back})
    result = _run(_neg_spec(known_failures={("*", "float32", "contiguous"): "tracked in issue 99"}))
    assert result.status == "xfail"
    assert result.message.startswith("known failure: tracked in issue 99 (not executed by gems"), result.message


def test_error_cases_need_the_same_exception_type():
    def never_raises(x, *, out):
        return out

    registration.apply({"neg.out": (never_raises, gems.Autograd.disable, "neg")}, gems.vendor().dispatch_key)
    from gems.spec import Sample

    def bad_out_samples(dtype, device, quick):
        x = torch.randn(4, device=device)
        return [Sample("error-out-dtype", (x,), {}, call=lambda t: torch.neg(t, out=torch.empty(4, dtype=torch.int64)),
                       expects="neg.out")]

    result = _run(_neg_spec(impls={"neg.out": never_raises}, samples=bad_out_samples), variant="error-out-dtype")
    assert result.status == "fail" and "ATen raises RuntimeError" in result.message
    # A declared divergence from ATen's errors (a device whose ATen does not check) is a known failure.
    declared = _neg_spec(impls={"neg.out": never_raises}, samples=bad_out_samples,
                         known_failures={("*", "float32", "error-out-dtype"): "ATen checks, gems does not"})
    result = _run(declared, variant="error-out-dtype")
    assert result.status == "xfail" and "ATen checks, gems does not" in result.message
    assert "ATen raises RuntimeError" in result.message
    gems.enable(include=["neg"])
    result = _run(_neg_spec(impls={"neg.out": never_raises}, samples=bad_out_samples), variant="error-out-dtype")
    assert result.status == "pass" and result.rule == "same-error"


def test_case_ids_are_unique_and_stable():
    cases = list_cases(ops.all_specs(), quick=True)
    assert len({c.id for c in cases}) == len(cases)
    assert Case("add", torch.float16, "broadcast").id == "add::float16::broadcast"


def test_gradients_are_judged_norm_wise_and_forward_outputs_elementwise():
    from gems.testing import compare

    tol = compare.default_tolerance(torch.bfloat16, "reduction")
    oracle = torch.tensor([1.0, -0.5, 1e-3], dtype=torch.float64)
    near_zero_off = oracle.clone()
    near_zero_off[2] = 5e-3  # 5x off at the smallest value, 0.4% of the largest gradient
    as_output = compare.compare(near_zero_off.to(torch.bfloat16), oracle, None, tol)
    as_gradient = compare.compare(near_zero_off.to(torch.bfloat16), oracle, None,
                                  compare.gradient_tolerance(tol, oracle))
    assert not as_output.passed and as_gradient.passed
    far_off = oracle.clone()
    far_off[2] = 0.05  # 5% of the largest gradient: wrong either way
    assert not compare.compare(far_off.to(torch.bfloat16), oracle, None, compare.gradient_tolerance(tol, oracle)).passed


def test_an_override_for_an_unknown_operator_or_dtype_is_refused(tmp_path):
    from gems.testing import compare

    path = tmp_path / "conformance_overrides.yaml"
    path.write_text("addd:\n  float16: {rtol: 0.01, reason: 'fp16 accumulation'}\n")
    with pytest.raises(ValueError, match=r"conformance_overrides.yaml: unknown operator 'addd' \(did you mean add"):
        compare.check_override_names(compare.load_overrides(path), path, ops.names(), ("float16",))
    path.write_text("add:\n  half: {rtol: 0.01, reason: 'fp16 accumulation'}\n")
    with pytest.raises(ValueError, match="'add': unknown dtype 'half'"):
        compare.check_override_names(compare.load_overrides(path), path, ops.names(), ("float16",))
