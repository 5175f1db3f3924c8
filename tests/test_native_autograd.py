"""Training-mode calls of autograd-level kernels in the native layer, on the interpreter vendor: after the first
call of a signature, a call that needs an autograd graph replays its forward from C++ and gets a C++ autograd node
(gems/native/autograd_node.cpp) built from its Function's declared backward (gems/runtime/native_backward.py),
whose backward calls the backward operator. Gradients must be those of the Python path (the Function), the graph
must behave as the Function's does (retain_graph, a second backward, in-place changes of saved tensors, double
backward), and calls that need no graph replay as before.
"""

import contextlib
import gc
import os
import shutil
import weakref

import pytest
import torch
import torch.nn.functional as F

import gems
from gems import native
from gems.runtime import registration
from gems.runtime.native_backward import Grad, Result, Saved, native_backward

DEVICE = gems.vendor().device
pytestmark = [pytest.mark.skipif(shutil.which(os.environ.get("CXX", "c++")) is None,
                                 reason="no C++ compiler: the native layer cannot be built here"),
              pytest.mark.skipif(DEVICE not in ("cpu", "cuda"), reason="the comparisons run ATen's composites, which "
                                 "a simulated device lacks (conformance's grad cases cover it)")]


def _rms_norm(x, w):
    return F.rms_norm(x, (x.shape[-1],), w, 1e-6)


def _rms_norm_composite(x, w):
    with gems.aten_only():
        return _rms_norm(x, w)


def _add_rms_composite(x, r, w):
    from gems.ops.fused.fused_add_rms_norm import reference

    return reference(x, r, w, 1e-6)


def _skip_composite(x, r, w, b):
    s = x + r
    return F.layer_norm(s, (s.shape[-1],), w, b, 1e-5), s


def _fused_rms_composite(x, w):
    from gems.ops.fused.fused_rms_norm import reference

    return reference(x, w, 1e-6, 1.0)


def _rope_composite(x, cos, sin):
    from gems.ops.fused.apply_rotary_position_embedding import reference

    return reference(x, cos, sin)


# name -> (API name counted, the call, its composite, inputs (odd sizes), positions of the leaves that require grad)
CASES = {
    "rms_norm": ("rms_norm", _rms_norm, _rms_norm_composite, lambda g: (_randn(g, 3, 5, 24), _randn(g, 24)), (0, 1)),
    "skip_layer_norm": ("gems.fused.skip_layer_norm", lambda x, r, w, b: gems.fused.skip_layer_norm(x, r, w, b, 1e-5),
                        _skip_composite, lambda g: (_randn(g, 3, 5, 40), _randn(g, 3, 5, 40), _randn(g, 40),
                                                    _randn(g, 40)), (0, 1, 2, 3)),
    "fused_add_rms_norm": ("gems.fused.fused_add_rms_norm",
                           lambda x, r, w: gems.fused.fused_add_rms_norm(x, r, w, 1e-6), _add_rms_composite,
                           lambda g: (_randn(g, 7, 33), _randn(g, 7, 33), _randn(g, 33)), (0, 1, 2)),
    "fused_rms_norm": ("gems.fused.fused_rms_norm", lambda x, w: gems.fused.fused_rms_norm(x, w, 1e-6, 1.0),
                       _fused_rms_composite, lambda g: (_randn(g, 7, 33), _randn(g, 33)), (0, 1)),
    "silu_and_mul": ("gems.fused.silu_and_mul", gems.fused.silu_and_mul, lambda x, up: F.silu(x) * up,
                     lambda g: (_randn(g, 6, 17), _randn(g, 6, 17)), (0, 1)),
    "gelu_and_mul": ("gems.fused.gelu_and_mul", lambda x: gems.fused.gelu_and_mul(x, approximate="tanh"),
                     lambda x: F.gelu(x[..., :9], approximate="tanh") * x[..., 9:], lambda g: (_randn(g, 5, 18),),
                     (0,)),
    "apply_rotary_position_embedding": ("gems.fused.apply_rotary_position_embedding",
                                        gems.fused.apply_rotary_position_embedding, _rope_composite,
                                        lambda g: (_randn(g, 2, 5, 3, 8), _randn(g, 5, 4), _randn(g, 5, 4)), (0,)),
}


def _randn(gen, *shape):
    return torch.randn(*shape, generator=gen).to(DEVICE)


@pytest.fixture(autouse=True)
def _fresh(gems_enabled):
    yield


def _outputs(result):
    return list(result) if isinstance(result, tuple) else [result]


def _python_path(fn, *args):
    native.extension().set_enabled(False)
    try:
        return fn(*args)
    finally:
        native.extension().set_enabled(True)


def _step(fn, args, leaves, grads):
    """One training step: the call on ``args`` (``leaves`` among them require grad), its backward with ``grads``."""
    outputs = _outputs(fn(*args))
    return outputs, torch.autograd.grad(outputs, leaves, grads)


def _inputs(name, gen, requires=None):
    _, _, _, make, positions = CASES[name]
    args = list(make(gen))
    for p in positions if requires is None else requires:
        args[p] = args[p].requires_grad_()
    return args, [args[p] for p in (positions if requires is None else requires)]


@pytest.mark.parametrize("name", sorted(CASES))
def test_training_calls_replay_their_forward_and_build_the_node_in_cpp(name):
    api, fn, composite, _, _ = CASES[name]
    gen = torch.Generator().manual_seed(0)
    for step in range(4):
        args, leaves = _inputs(name, gen)
        outputs = _outputs(fn(*args))
        grads = [_randn(gen, *o.shape) for o in outputs]
        got = torch.autograd.grad(outputs, leaves, grads)
        # The first call's node is the Function's (_GatedBackward...), the others' the C++ node.
        expected = "_" if step == 0 else f"Gems{''.join(p.title() for p in name.split('_'))}Backward"
        assert all(o.grad_fn is outputs[0].grad_fn for o in outputs)
        assert outputs[0].grad_fn.name().startswith(expected), outputs[0].grad_fn.name()
        # The Python path (the Function) on the same inputs: the same values and gradients, bit for bit.
        python_outputs, python = _python_path(_step, fn, args, leaves, grads)
        assert python_outputs[0].grad_fn.name().startswith("_")  # the Function's node
        for a, b in [*zip(outputs, python_outputs), *zip(got, python)]:
            assert torch.equal(a.detach(), b), (a - b).abs().max()
        for a, b in zip(got, torch.autograd.grad(_outputs(composite(*args)), leaves, grads)):  # ATen's composite
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)
    assert registration.gems_calls.cell(api)[0] == 1 + 4  # the first call, and the four Python-path comparisons
    assert native.call_counts().get(api) == 3
    assert native.python_calls()[api] == {"the first call of its signature (recorded)": 1,
                                          "the native layer is turned off": 4}


def test_calls_that_need_no_graph_still_replay_and_build_none():
    gen = torch.Generator().manual_seed(1)
    x, r, w = _randn(gen, 7, 33), _randn(gen, 7, 33), _randn(gen, 33)
    with torch.no_grad():
        for _ in range(3):
            y, s = gems.fused.fused_add_rms_norm(x.requires_grad_(), r, w, 1e-6)
            assert y.grad_fn is None and not y.requires_grad
    for _ in range(3):  # grad mode on, no input requires grad
        y, s = gems.fused.fused_add_rms_norm(x.detach(), r, w, 1e-6)
        assert y.grad_fn is None
    # One signature: without a tensor that requires grad while grad mode is on, the call needs no graph.
    assert native.call_counts().get("gems.fused.fused_add_rms_norm") == 5


def test_which_inputs_require_grad_is_part_of_the_signature():
    gen = torch.Generator().manual_seed(2)
    for requires in [(0,), (2,), (0, 1, 2, 3), (2,), (0,)]:
        args, leaves = _inputs("skip_layer_norm", gen, requires)
        outputs = _outputs(CASES["skip_layer_norm"][1](*args))
        grads = [_randn(gen, *o.shape) for o in outputs]
        got = torch.autograd.grad(outputs, leaves, grads)
        python = _python_path(_step, CASES["skip_layer_norm"][1], args, leaves, grads)[1]
        for a, b in zip(got, python):
            assert torch.equal(a, b)
    assert native.call_counts().get("gems.fused.skip_layer_norm") == 2


def test_an_unused_output_gets_no_gradient_and_weights_stay_none():
    """skip_layer_norm with only s used: the declared ``undefined`` rule passes ds on, as the Function does."""
    gen = torch.Generator().manual_seed(3)
    for _ in range(3):
        args, _ = _inputs("skip_layer_norm", gen)
        x, r, w, b = args
        y, s = CASES["skip_layer_norm"][1](*args)
        (s * 3).sum().backward()
        assert w.grad is None and b.grad is None
        assert torch.equal(x.grad, torch.full_like(x, 3.0)) and torch.equal(r.grad, x.grad)
    assert native.call_counts().get("gems.fused.skip_layer_norm") == 2


def _second_call(name, seed, python_path):
    """A call of ``name`` after the first of its signature (recorded): replayed with its C++ node, or with
    ``python_path`` the Function's. Returns (args, leaves, outputs)."""
    gen = torch.Generator().manual_seed(seed)
    fn = CASES[name][1]
    fn(*_inputs(name, gen)[0])
    args, leaves = _inputs(name, gen)
    outputs = _outputs(_python_path(fn, *args) if python_path else fn(*args))
    assert outputs[0].grad_fn.name().startswith("_" if python_path else "Gems")  # the Function's node, or the C++ one
    return args, leaves, outputs


@pytest.mark.parametrize("python_path", [False, True])
def test_retain_graph_and_a_second_backward_behave_as_the_functions(python_path):
    _, leaves, (y,) = _second_call("silu_and_mul", 4, python_path)
    y.sum().backward(retain_graph=True)
    once = [t.grad.clone() for t in leaves]
    y.sum().backward()
    for t, g in zip(leaves, once):
        assert torch.equal(t.grad, 2 * g)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.sum().backward()


@pytest.mark.parametrize("python_path", [False, True])
@pytest.mark.parametrize(("name", "modify"), [
    ("silu_and_mul", lambda args, outputs: args[1].mul_(2)),  # a saved input
    ("rms_norm", lambda args, outputs: args[0].add_(1)),  # its rows view was saved
    ("skip_layer_norm", lambda args, outputs: outputs[1].add_(1)),  # s, a result, was saved
])
def test_modifying_a_saved_tensor_in_place_before_backward_raises(name, modify, python_path):
    args, leaves, outputs = _second_call(name, 5, python_path)
    with torch.no_grad():
        modify(args, outputs)
    # The same error either way: a version mismatch, or for a view saved in no_grad mode (rms_norm's rows of x),
    # torch's refusal to use such a view after its base changed.
    with pytest.raises(RuntimeError, match="modified by an inplace operation|base has been modified inplace"):
        torch.autograd.grad(outputs[0].sum(), leaves)


@pytest.mark.parametrize("python_path", [False, True])
def test_a_second_derivative_raises_as_once_differentiable_does(python_path):
    args, leaves, (y,) = _second_call("silu_and_mul", 6, python_path)
    first = torch.autograd.grad(y.square().sum(), leaves, create_graph=True)
    want = torch.autograd.grad(F.silu(args[0]) * args[1], leaves, 2 * y.detach())
    for a, b in zip(first, want):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)
    with pytest.raises(RuntimeError, match="differentiate twice"):
        first[0].sum().backward()


def test_the_backward_operator_replays_under_the_cpp_node():
    gen = torch.Generator().manual_seed(7)
    for _ in range(3):
        args, leaves = _inputs("apply_rotary_position_embedding", gen)
        torch.autograd.grad(gems.fused.apply_rotary_position_embedding(*args).sum(), leaves)
    assert native.call_counts().get("gems::rotary_position_embedding_backward") == 2


def test_a_forward_mode_tangent_keeps_the_python_path():
    import torch.autograd.forward_ad as fwad

    x, up = torch.randn(4, 6, device=DEVICE), torch.randn(4, 6, device=DEVICE)
    with fwad.dual_level():
        dual = fwad.make_dual(x, torch.ones_like(x))
        for _ in range(2):
            gems.fused.silu_and_mul(dual, up)
    assert native.call_counts().get("gems.fused.silu_and_mul") is None
    assert native.python_reasons()["gems.fused.silu_and_mul"].startswith("autograd: an input has a forward-mode")


def test_an_incomplete_declaration_fails_at_import():
    class _Fn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, up, act):
            return x

    with pytest.raises(ValueError, match="2 grads for forward's 3 inputs"):
        native_backward("gems::gated_backward", args=(Grad(0), Saved(0), Saved(1), 0), grads=(Result(0), None))(_Fn)
    with pytest.raises(ValueError, match="no operator"):
        native_backward("gems::no_such_backward", args=(), grads=(None, None, None))(_Fn)
    with pytest.raises(ValueError, match="argument act has no default"):
        native_backward("gems::gated_backward", args=(Grad(0), Saved(0), Saved(1)), grads=(None, None, None))(_Fn)


def test_a_function_without_a_declared_backward_keeps_the_python_path(monkeypatch):
    from gems.ops.fused.gated import _Gated

    monkeypatch.setattr(_Gated, "apply", _Gated.apply.__wrapped__)  # as if it declared none: nothing is recorded
    gen = torch.Generator().manual_seed(8)
    for _ in range(3):
        args, leaves = _inputs("silu_and_mul", gen)
        y = gems.fused.silu_and_mul(*args)
        assert type(y.grad_fn).__name__ == "_GatedBackward"
        torch.autograd.grad(y.sum(), leaves)
    assert native.call_counts().get("gems.fused.silu_and_mul") is None
    assert native.python_reasons()["gems.fused.silu_and_mul"] == (
        "autograd: _GatedBackward has no native backward declared (its Function's backward is Python: "
        "gems/runtime/native_backward.py)")


def test_a_training_call_whose_result_needs_no_graph_replays_without_a_node():
    x, y = torch.randn(5, 7, device=DEVICE, requires_grad=True), torch.randn(5, 7, device=DEVICE)
    for _ in range(3):
        close = torch.isclose(x, y)
        assert close.grad_fn is None and not close.requires_grad
    assert native.call_counts().get("isclose") == 2


def test_a_chain_of_replayed_calls_passes_gradients_through_their_nodes():
    """A transformer block's residual path: each node's edges lead to the previous call's node, not to leaves."""
    def block(x, r, w, up):
        y, s = gems.fused.fused_add_rms_norm(x, r, w, 1e-6)
        return gems.fused.silu_and_mul(y, up), s

    def two_blocks(leaves, grads):
        x, r, w, up = leaves
        return torch.autograd.grad(block(*block(x, r, w, up), w, up), leaves, grads)

    gen = torch.Generator().manual_seed(9)
    for _ in range(3):
        leaves = [_randn(gen, 7, 33).requires_grad_(), _randn(gen, 7, 33).requires_grad_(),
                  _randn(gen, 33).requires_grad_(), _randn(gen, 7, 33).requires_grad_()]
        grads = [_randn(gen, 7, 33), _randn(gen, 7, 33)]
        got = two_blocks(leaves, grads)
        python = _python_path(two_blocks, leaves, grads)
        for a, b in zip(got, python):
            assert torch.equal(a, b)
    # Two calls per step, one signature (leaves or not, both inputs require grad): all but the first replay.
    assert native.call_counts().get("gems.fused.silu_and_mul") == 5
    assert native.call_counts().get("gems.fused.fused_add_rms_norm") == 5


def test_a_replayed_calls_results_are_freed_with_its_graph():
    """The node holds no result (a saved result's memory is no view of it), so nothing cycles: a dropped graph
    frees its results, whether or not its backward ran."""
    gen = torch.Generator().manual_seed(10)
    args, _ = _inputs("skip_layer_norm", gen)
    CASES["skip_layer_norm"][1](*args)
    for backward in (False, True):
        y, s = CASES["skip_layer_norm"][1](*args)
        assert y.grad_fn.name() == "GemsSkipLayerNormBackward"
        if backward:
            (y.sum() + s.sum()).backward()
        refs = weakref.ref(y), weakref.ref(s)
        del y, s
        gc.collect()
        assert all(ref() is None for ref in refs)


def test_saved_tensor_hooks_see_the_nodes_saved_tensors():
    """torch.autograd.graph.saved_tensors_hooks (activation offloading, checkpointing) pack what the C++ node saves,
    as they pack what the Function saved. A call under hooks is not recorded (what the Function saved comes back
    through them): the signature is recorded by a call outside them."""
    packed = []

    def pack(t):
        packed.append(t)
        return t.clone()

    gen = torch.Generator().manual_seed(11)
    for step in range(4):
        args, leaves = _inputs("silu_and_mul", gen)
        packed.clear()
        with contextlib.ExitStack() as hooks:
            if step != 1:  # the second call records
                hooks.enter_context(torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t))
            y = gems.fused.silu_and_mul(*args)
        assert y.grad_fn.name().startswith("Gems" if step > 1 else "_")
        assert len(packed) == (0 if step == 1 else 2) and all(p is a for p, a in zip(packed, args))
        got = torch.autograd.grad(y.sum(), leaves)
        python = _python_path(_step, gems.fused.silu_and_mul, args, leaves, [torch.ones_like(y)])[1]
        for a, b in zip(got, python):
            assert torch.equal(a, b)
    assert native.python_calls()["gems.fused.silu_and_mul"]["autograd: saved-tensor hooks are active (what the "
                                                            "Function saved is read back through them; the next call "
                                                            "of the signature is recorded)"] == 1
