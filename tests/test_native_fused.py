"""gems' own operators (gems.fused's, and the backward passes of gems' autograd Functions: the ``gems``
library namespace of gems/runtime/operators.py) in the native layer, on the interpreter vendor: a call that needs
no autograd graph replays from C++ after the first call of its signature, as an ATen overload's does, with the
answers of the Python path, and so does one that needs a graph (its node built in C++: tests/test_native_autograd.py);
an input the kernel does not take and ``gems.aten_only()`` take the Python implementation or the composite.
"""

import importlib
import os
import shutil
import sys

import pytest
import torch

import gems
from gems import native
from gems.runtime import registration

pytestmark = [pytest.mark.skipif(shutil.which(os.environ.get("CXX", "c++")) is None,
                                 reason="no C++ compiler: the native layer cannot be built here"),
              pytest.mark.skipif(gems.vendor().name != "interpreter", reason="checks the interpreter vendor (CPU "
                                 "tensors); conformance checks the fused operators' replays on every vendor")]


def _gen():
    return torch.Generator().manual_seed(0)


def _randn(*shape, gen):
    return torch.randn(*shape, generator=gen)


# name -> inputs of one call (odd sizes: masks run), positional as the schema orders them.
INPUTS = {
    "skip_layer_norm": lambda g: (_randn(3, 5, 40, gen=g), _randn(3, 5, 40, gen=g), _randn(40, gen=g),
                                  _randn(40, gen=g), 1e-5),
    "fused_add_rms_norm": lambda g: (_randn(7, 33, gen=g), _randn(7, 33, gen=g), _randn(33, gen=g), 1e-6, 0.0),
    "fused_rms_norm": lambda g: (_randn(7, 33, gen=g), _randn(33, gen=g), 1e-6, 1.0),
    "silu_and_mul": lambda g: (_randn(6, 34, gen=g),),
    "gelu_and_mul": lambda g: (_randn(6, 17, gen=g), _randn(6, 17, gen=g), "tanh"),
    "apply_rotary_position_embedding": lambda g: (_randn(2, 5, 3, 8, gen=g), _randn(5, 4, gen=g),
                                                  _randn(5, 4, gen=g), False),
    "scaled_softmax_forward": lambda g: (_randn(2, 3, 5, 17, gen=g), 0.125),
    "scaled_softmax_backward": lambda g: (_randn(2, 3, 5, 17, gen=g), torch.softmax(_randn(2, 3, 5, 17, gen=g), -1),
                                          0.125),
}


@pytest.fixture(autouse=True)
def _fresh():
    native.invalidate()
    gems.reset_counts()
    yield


def _api(name):
    return f"gems.fused.{name}"


def _counts(name):
    """(calls served by the Python implementation, calls replayed natively)."""
    return registration.gems_calls.cell(_api(name))[0], native.call_counts().get(_api(name), 0)


def _outputs(result):
    return list(result) if isinstance(result, tuple) else [result]


def _python_path(fn, args):
    native.extension().set_enabled(False)
    try:
        return fn(*args)
    finally:
        native.extension().set_enabled(True)


@pytest.mark.parametrize("name", sorted(INPUTS))
def test_a_fused_call_replays_natively_after_its_first_call_with_the_python_paths_answers(name):
    fn, gen = getattr(gems.fused, name), _gen()
    calls = [INPUTS[name](gen) for _ in range(4)]  # fresh values, one signature
    with torch.no_grad():
        got = [fn(*args) for args in calls]
    assert gems.native_status()["active"], gems.native_status()["reason"]
    assert _counts(name) == (1, 3)
    assert gems.call_counts()["gems"][_api(name)] == 4 and not gems.call_counts()["fallback"]
    with torch.no_grad():
        for args, result in zip(calls, got):
            for replayed, python in zip(_outputs(result), _outputs(_python_path(fn, args))):
                assert torch.equal(replayed, python)
    spec = importlib.import_module(f"gems.ops.fused.{name}").SPECS[0]
    for replayed, composite in zip(_outputs(got[-1]), _outputs(spec.reference(*calls[-1]))):
        torch.testing.assert_close(replayed, composite, rtol=1e-5, atol=1e-5)


def test_a_replayed_fused_call_does_not_enter_the_python_implementation():
    x, skip, w, b, eps = INPUTS["skip_layer_norm"](_gen())
    with torch.no_grad():
        gems.fused.skip_layer_norm(x, skip, w, b, eps)  # cold: recorded
        entered = set()

        def profile(frame, event, arg):
            if event == "call":
                entered.add(frame.f_code.co_name)

        sys.setprofile(profile)
        try:
            gems.fused.skip_layer_norm(x.clone(), skip.clone(), w, b, eps)
        finally:
            sys.setprofile(None)
    assert _counts("skip_layer_norm") == (1, 1)
    # The interpreter's launch primitive is Python (record.replay -> Launcher -> the interpreter); the checks, the
    # implementation and its row launcher are not entered.
    assert not entered & {"checked", "_skip_layer_norm", "residual_norm", "row_forward", "serve"}, entered


def test_a_fused_call_that_needs_a_graph_replays_too_and_its_backward_matches_the_composite():
    from gems.ops.fused.fused_add_rms_norm import reference

    gen = _gen()
    w = _randn(33, gen=gen).requires_grad_()
    for _ in range(3):
        x, r = _randn(7, 33, gen=gen).requires_grad_(), _randn(7, 33, gen=gen).requires_grad_()
        y, s = gems.fused.fused_add_rms_norm(x, r, w, 1e-6)
        grads = torch.autograd.grad((y * y).sum() + s.sum(), (x, r, w))
        y2, s2 = reference(x, r, w, 1e-6)
        want = torch.autograd.grad((y2 * y2).sum() + s2.sum(), (x, r, w))
        for got, expected in zip(grads, want):
            torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-4)
        assert y.grad_fn is s.grad_fn
    assert y.grad_fn.name() == "GemsFusedAddRmsNormBackward"
    assert _counts("fused_add_rms_norm") == (1, 2)


@pytest.mark.parametrize(("name", "backward", "differentiable"), [
    ("skip_layer_norm", "gems::row_norm_backward", (0, 1, 2, 3)),
    ("fused_rms_norm", "gems::row_norm_backward", (0, 1)),
    ("gelu_and_mul", "gems::gated_backward", (0, 1)),
    ("apply_rotary_position_embedding", "gems::rotary_position_embedding_backward", (0,)),
])
def test_a_fused_backward_replays_natively_after_its_first_call(name, backward, differentiable):
    """The autograd Functions' backward passes are operators of gems' own (gems/runtime/operators.py) at the
    vendor's key: the first backward of a signature records, the next ones replay."""
    fn, gen = getattr(gems.fused, name), _gen()
    reference = importlib.import_module(f"gems.ops.fused.{name}").SPECS[0].reference
    for _ in range(3):
        args = INPUTS[name](gen)
        leaves = [args[i].requires_grad_() for i in differentiable]
        got = torch.autograd.grad(sum(o.square().sum() for o in _outputs(fn(*args))), leaves)
        want = torch.autograd.grad(sum(o.square().sum() for o in _outputs(reference(*args))), leaves)
        for g, w in zip(got, want):
            torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-4)
    assert registration.gems_calls.cell(backward)[0] == 1 and native.call_counts().get(backward) == 2


def test_a_backward_given_one_tensor_as_both_gradients_replays():
    x, r = torch.randn(4, 64, requires_grad=True), torch.randn(4, 64, requires_grad=True)
    w, b = torch.randn(64, requires_grad=True), torch.randn(64, requires_grad=True)
    dy = torch.randn(4, 64)
    for _ in range(3):  # dy is y's gradient and s's: the backward views it twice (as dy and as ds)
        got = torch.autograd.grad(gems.fused.skip_layer_norm(x, r, w, b, 1e-5), (x, r, w, b), (dy, dy))
    with gems.aten_only():
        want = torch.autograd.grad(gems.fused.skip_layer_norm(x, r, w, b, 1e-5), (x, r, w, b), (dy, dy))
    for g, expected in zip(got, want):
        torch.testing.assert_close(g, expected, rtol=1e-4, atol=1e-4)
    assert native.call_counts().get("gems::row_norm_backward") == 2


@pytest.mark.usefixtures("gems_enabled")
def test_rms_norms_backward_replays_natively_too():
    w = torch.randn(24, requires_grad=True)
    for _ in range(3):
        x = torch.randn(6, 24, requires_grad=True)
        got = torch.autograd.grad(torch.nn.functional.rms_norm(x, (24,), w).square().sum(), (x, w))
        with gems.aten_only():
            want = torch.autograd.grad(torch.nn.functional.rms_norm(x, (24,), w).square().sum(), (x, w))
        for g, expected in zip(got, want):
            torch.testing.assert_close(g, expected, rtol=1e-4, atol=1e-4)
    assert native.call_counts().get("gems::row_norm_backward") == 2


@pytest.mark.usefixtures("gems_enabled")
def test_an_input_the_kernel_does_not_take_runs_the_composite_every_time():
    x, r = torch.randn(4, 16), torch.randn(4, 16, dtype=torch.float64)
    for _ in range(3):
        y, s = gems.fused.fused_add_rms_norm(x, r)
        assert s.dtype == torch.float64
    fallbacks = {why: n for (name, why), n in gems.call_counts()["fallback"].items()
                 if name == _api("fused_add_rms_norm")}
    assert list(fallbacks.values()) == [3] and "one floating dtype" in next(iter(fallbacks))
    assert _counts("fused_add_rms_norm") == (0, 0)
    # The composite runs as the caller's code would: its ATen ops reach gems' kernels (on the simulated device
    # ATen has none), not ATen's under the interpreter's guard.
    assert gems.call_counts()["gems"].get("add.Tensor", 0) >= 3


def test_aten_only_runs_the_composite_and_errors_reach_the_caller():
    x = torch.randn(4, 10)
    with gems.aten_only():
        torch.testing.assert_close(gems.fused.silu_and_mul(x), torch.nn.functional.silu(x[:, :5]) * x[:, 5:])
    assert _counts("silu_and_mul") == (0, 0)
    with pytest.raises(ValueError, match="must be even"):
        gems.fused.silu_and_mul(torch.randn(3, 5))


def test_fused_calls_over_growing_rows_replay_natively():
    w = torch.randn(32)
    with torch.no_grad():
        for rows in range(5, 30):
            x, r = torch.randn(rows, 32), torch.randn(rows, 32)
            y, s = gems.fused.fused_add_rms_norm(x, r, w)
            torch.testing.assert_close(s, x + r)
            torch.testing.assert_close(y, torch.nn.functional.rms_norm(x + r, (32,), w, 1e-6), rtol=1e-5,
                                       atol=1e-5)
    assert native.generic_counts().get(_api("fused_add_rms_norm"), 0) >= 18


def test_the_operators_are_torch_ops_of_the_gems_namespace():
    x = torch.randn(6, 34)
    gems.fused.silu_and_mul(x)  # registers gems' implementation
    op = torch.ops.gems.silu_and_mul.default
    assert gems.fused.silu_and_mul.operator is op
    with torch.no_grad():
        torch.testing.assert_close(op(x), torch.nn.functional.silu(x[:, :17]) * x[:, 17:])
    assert _counts("silu_and_mul") == (1, 1)
    assert not hasattr(gems.fused.linear_cross_entropy, "operator")  # a Python API: chunked GEMMs, not replayed
