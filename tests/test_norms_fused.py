"""Operators that bring their own backward (Autograd.enable) and the gems.fused API: registration,
proof of execution and the reference oracle (interpreter vendor)."""

import pytest
import torch
import torch.nn.functional as F

import gems
from gems import native, ops
from gems.ops.fused import silu_and_mul as silu_module
from gems.runtime import registration
from gems.spec import OpSpec
from gems.testing.cases import Case
from gems.testing.conformance import run_case

DEVICE = "cpu"


@pytest.fixture(autouse=True)
def _restore_registration():
    previous = registration.snapshot()
    yield
    registration.apply(previous, gems.vendor().dispatch_key)


def _run(name, variant, dtype=torch.float32):
    # gems.fused's operators replay natively: a signature recorded earlier would skip a monkeypatched kernel.
    native.invalidate()
    spec = ops.get(name)
    return run_case(spec, Case(name, dtype, variant), DEVICE, True, "interpreter", {}, repro="pytest ...")


def test_rms_norm_is_registered_with_its_own_backward_and_both_run_gems_kernels(monkeypatch):
    table = gems._implementation_table()
    assert table["rms_norm"][1] is gems.Autograd.enable
    assert table["native_layer_norm"][1] is gems.Autograd.disable
    from gems.ops.normalization import rows, rows_backward

    launches = []
    for module, name in ((rows, "_forward"), (rows_backward, "_backward")):
        launcher = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, _l=launcher, _n=name, **k: (launches.append(_n), _l(*a, **k)))
    x = torch.randn(5, 33, dtype=torch.float64, requires_grad=True)
    w = torch.randn(33, dtype=torch.float64, requires_grad=True)
    want = F.rms_norm(x, (33,), w, 1e-6)
    want_grads = torch.autograd.grad(want.sum(), (x, w))
    gems.reset_counts()
    with gems.use_gems(include=["rms_norm"]):
        got = F.rms_norm(x, (33,), w, 1e-6)
        got_grads = torch.autograd.grad(got.sum(), (x, w))
    # the backward is an operator of gems' own (gems/runtime/operators.py), which the native layer replays
    assert gems.call_counts()["gems"] == {"rms_norm": 1, "gems::row_norm_backward": 1}
    assert launches == ["_forward", "_backward"]  # one fused kernel each way (plus dw's column sum)
    torch.testing.assert_close(got, want)
    for g, w_ in zip(got_grads, want_grads):
        torch.testing.assert_close(g, w_)


def test_fused_calls_are_counted_and_inputs_that_need_grad_run_the_kernels_both_ways(monkeypatch):
    from gems.ops.fused import gated

    x = torch.randn(4, 10)
    gems.reset_counts()
    torch.testing.assert_close(gems.fused.silu_and_mul(x), F.silu(x[:, :5]) * x[:, 5:])
    assert gems.call_counts()["gems"] == {"gems.fused.silu_and_mul": 1}
    launches = []
    for name in ("_forward", "_backward"):
        launcher = getattr(gated, name)
        monkeypatch.setattr(gated, name, lambda *a, _l=launcher, _n=name, **k: (launches.append(_n), _l(*a, **k)))
    leaf = x.clone().requires_grad_()
    (grad,) = torch.autograd.grad(gems.fused.silu_and_mul(leaf).sum(), leaf)
    (want,) = torch.autograd.grad((F.silu(leaf[:, :5]) * leaf[:, 5:]).sum(), leaf)
    torch.testing.assert_close(grad, want)
    assert launches == ["_forward", "_backward"] and not gems.call_counts()["fallback"]


def test_a_fused_function_without_backward_runs_the_composite_for_inputs_that_need_grad():
    x = torch.randn(2, 3, 8, requires_grad=True)
    gems.reset_counts()
    assert gems.fused.scaled_softmax_forward(x, 0.5).requires_grad  # the composite ran, so autograd still works
    (reason,) = [why for (name, why) in gems.call_counts()["fallback"] if name == "gems.fused.scaled_softmax_forward"]
    assert "requires grad" in reason


def test_a_wrong_fused_kernel_fails_against_the_reference(monkeypatch):
    assert _run("silu_and_mul", "contiguous").status == "pass"
    monkeypatch.setattr(silu_module, "gated", lambda x, up, act: x[..., : x.shape[-1] // 2] * 1.0)
    result = _run("silu_and_mul", "contiguous")
    assert result.status == "fail" and "values outside" in result.message


def test_a_fused_function_that_falls_back_is_not_counted_as_executed(monkeypatch):
    def refuse(x, up, act):
        raise gems.Fallback("test: not handled")

    monkeypatch.setattr(silu_module, "gated", refuse)
    result = _run("silu_and_mul", "contiguous")
    assert result.status == "fail" and "not executed by gems" in result.message


def test_declarations_of_api_and_autograd_operators_are_checked():
    fields = dict(name="x", family="fused", impls={}, call=torch.neg, samples=lambda *a: [],
                  dtypes=(torch.float32,))
    with pytest.raises(ValueError, match="reference"):
        OpSpec(**fields, api={"gems.fused.x": torch.neg})
    with pytest.raises(ValueError, match="impls is empty"):
        OpSpec(**fields)
    with pytest.raises(ValueError, match="autograd_enabled"):
        OpSpec(**{**fields, "impls": {"neg": torch.neg}}, autograd_enabled=("abs",))
    spec = OpSpec(**fields, api={"gems.fused.x": torch.neg}, reference=torch.neg)
    assert spec.overloads == ("gems.fused.x",)
