"""The native dispatch layer (gems/native) on the interpreter vendor: keying, recording, replay, counts.

The interpreter vendor runs the same C++ dispatch, key and plan code as a GPU vendor; only its launch
primitive calls back into Python (the Triton interpreter). Each test uses fresh tensors and checks
both the values and which path served the call.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import gems
from gems import native
from gems.runtime import registration

pytestmark = [pytest.mark.skipif(shutil.which(os.environ.get("CXX", "c++")) is None,
                                 reason="no C++ compiler: the native layer cannot be built here"),
              pytest.mark.usefixtures("gems_enabled")]

REPO = Path(__file__).resolve().parents[1]


def aten(fn, *args, **kwargs):
    """ATen's answer (gems stays registered but steps aside)."""
    with gems.aten_only():
        return fn(*args, **kwargs)


def close(got, expected):
    """gems rounds x + alpha * y once more or less than ATen's CPU kernel may: one ulp apart."""
    torch.testing.assert_close(got, expected, rtol=1e-6, atol=1e-6)


def _counts(overload):
    """(calls served by the Python implementation, calls replayed natively, kernels replayed)."""
    python = registration.gems_calls.cell(overload)[0]
    return python, native.call_counts().get(overload, 0), native.launch_counts().get(overload, 0)


def test_native_layer_is_active():
    status = gems.native_status()
    assert status["active"], status["reason"]
    assert status["primitive"] == "python" and status["reason"] == ""


def test_the_build_compiles_a_copy_of_the_source_in_its_cache():
    # ninja rebuilds when the compile command changes: a command naming the package's own path would make
    # every checkout of the same source (worktrees, CI's scratch copy) rebuild it for its path.
    build_dir = Path(gems.native_status()["build_dir"])
    staged = build_dir / native.SOURCE.name
    assert staged.read_bytes() == native.SOURCE.read_bytes()
    ninja = (build_dir / "build.ninja").read_text()
    assert str(staged) in ninja and str(native.SOURCE) not in ninja


def test_warm_call_does_not_enter_the_python_implementation():
    x = torch.randn(37)
    torch.abs(x)  # cold: Python records the plan
    assert _counts("abs") == (1, 0, 0)
    entered = set()

    def profile(frame, event, arg):
        if event == "call":
            entered.add((frame.f_code.co_filename, frame.f_code.co_name))

    y = torch.randn(37)
    sys.setprofile(profile)
    try:
        got = torch.abs(y)
    finally:
        sys.setprofile(None)
    assert torch.equal(got, aten(torch.abs, y))
    assert _counts("abs") == (1, 1, 1)
    # The interpreter's launch primitive is Python (record.replay -> Launcher -> the Triton
    # interpreter running the kernel); the registration wrapper and the operator's Python
    # implementation (PointwiseOp.__call__ and its fast path) are not entered.
    assert any(f.endswith(os.path.join("native", "record.py")) and name == "replay" for f, name in entered)
    assert not [(f, name) for f, name in entered if (f.endswith("registration.py") and name == "impl")
                or (f.endswith("pointwise.py") and name in ("__call__", "_call_fast", "_launch"))]
    assert registration.gems_calls["abs"] == 2 and gems.call_counts()["gems"]["abs"] == 2


def test_replay_uses_the_new_call_tensors_and_scalars():
    x, y = torch.randn(5, 7), torch.randn(5, 7)
    torch.add(x, y, alpha=2)
    for _ in range(2):
        a, b = torch.randn(5, 7), torch.randn(5, 7)
        close(torch.add(a, b, alpha=2), aten(torch.add, a, b, alpha=2))
    assert _counts("add.Tensor")[:2] == (1, 2)
    # another scalar value is another signature: recorded, then replayed
    a, b = torch.randn(5, 7), torch.randn(5, 7)
    close(torch.add(a, b, alpha=3), aten(torch.add, a, b, alpha=3))
    assert _counts("add.Tensor")[:2] == (2, 2)
    close(torch.add(b, a, alpha=3), aten(torch.add, b, a, alpha=3))
    assert _counts("add.Tensor")[:2] == (2, 3)


def test_number_operands_are_part_of_the_key():
    x = torch.randn(16)
    for factor in (2.0, 3.0, 3.0):
        assert torch.equal(torch.mul(x, factor), aten(torch.mul, x, factor))
    python, replayed, _ = _counts("mul.Tensor")
    assert (python, replayed) == (2, 1)


def test_aliased_inputs_are_planned_apart():
    x, y = torch.randn(9), torch.randn(9)
    torch.add(x, y)
    torch.add(x, x)  # same data in both operands: another signature, not a replay of add(x, y)
    assert _counts("add.Tensor")[:2] == (2, 0)
    a, b = torch.randn(9), torch.randn(9)
    assert torch.equal(torch.add(a, a), aten(torch.add, a, a)) and torch.equal(torch.add(a, b), aten(torch.add, a, b))
    assert _counts("add.Tensor")[:2] == (2, 2)


def test_out_and_inplace_replay_write_the_given_tensor():
    for _ in range(3):
        x, y, out = torch.randn(6, 4), torch.randn(6, 4), torch.empty(6, 4)
        result = torch.add(x, y, out=out)
        assert result is out and torch.equal(out, aten(torch.add, x, y))
    for _ in range(3):
        x, y = torch.randn(6, 4), torch.randn(6, 4)
        expected = aten(torch.add, x, y)
        assert x.add_(y) is x and torch.equal(x, expected)
    assert _counts("add.out")[:2] == (1, 2) and _counts("add_.Tensor")[:2] == (1, 2)


def test_partial_overlap_still_raises_when_warm():
    x, y, out = torch.randn(8), torch.randn(8), torch.empty(8)
    torch.add(x, y, out=out)
    base = torch.randn(9)
    a, overlapping = base[:8], base[1:]
    with pytest.raises(RuntimeError) as gems_error:
        torch.add(a, y, out=overlapping)
    with gems.aten_only(), pytest.raises(RuntimeError) as aten_error:
        torch.add(a, y, out=overlapping)
    assert type(gems_error.value) is type(aten_error.value)
    assert _counts("add.out")[1] == 0


def test_broadcast_and_strided_operands_replay():
    for _ in range(3):
        x, row = torch.randn(4, 6).t(), torch.randn(4)
        assert torch.equal(torch.mul(x, row), aten(torch.mul, x, row))
    assert _counts("mul.Tensor")[:2] == (1, 2)


def test_reductions_replay():
    for _ in range(3):
        x = torch.randn(6, 33)
        torch.testing.assert_close(torch.sum(x, dim=1), aten(torch.sum, x, dim=1), rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(torch.softmax(x, dim=1), aten(torch.softmax, x, dim=1), rtol=1e-5, atol=1e-6)
    assert _counts("sum.dim_IntList")[1] == 2 and _counts("_softmax")[1] == 2


def test_a_fallback_signature_stays_in_python_and_is_counted():
    x = torch.randn(4, dtype=torch.complex64)
    expected = aten(torch.abs, x)
    for _ in range(3):
        assert torch.equal(torch.abs(x), expected)
    fallbacks = sum(v for (o, _), v in registration.fallback_calls.items() if o == "abs")
    assert fallbacks == 3 and _counts("abs")[:2] == (0, 0)
    assert native.python_reasons()["abs"] == "ATen served it (a fallback)"


def test_plan_counts_and_invalidation():
    x = torch.randn(10)
    torch.neg(x)
    torch.neg(x)
    assert native.plan_counts().get("neg") == 1 and _counts("neg")[:2] == (1, 1)
    native.invalidate()
    torch.neg(x)
    assert _counts("neg")[:2] == (2, 1)


def test_use_gems_exclude_gives_the_overload_back_to_aten():
    x = torch.randn(10)
    torch.abs(x)
    torch.abs(x)
    with gems.use_gems(exclude=["abs"]):
        assert torch.equal(torch.abs(x), aten(torch.abs, x))
    assert _counts("abs")[:2] == (1, 1)  # the excluded call counted nowhere: ATen ran it
    torch.abs(x)
    assert sum(_counts("abs")[:2]) == 3


def _run_python(code, **env):
    environment = {**os.environ, "GEMS_VENDOR": "interpreter", **env}
    return subprocess.run([sys.executable, "-c", code], cwd=REPO, env=environment, capture_output=True,
                          text=True, timeout=600)


def test_turned_off_layer_says_so_and_python_serves():
    proc = _run_python("import gems, torch; gems.enable(); x = torch.randn(5); torch.abs(x); torch.abs(x);"
                       "print(gems.native_status()['reason']); print(gems.call_counts()['gems']['abs'])",
                       GEMS_NATIVE="0")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:2] == ["turned off by GEMS_NATIVE=0", "2"]


def test_missing_compiler_is_one_clear_message(tmp_path):
    proc = _run_python("import gems, torch; gems.enable(); x = torch.randn(5);"
                       "assert torch.equal(torch.abs(x), x.abs()); print(gems.native_status())",
                       CXX="no-such-compiler", GEMS_CACHE_DIR=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "no C++ compiler" in proc.stdout and "'active': False" in proc.stdout
    assert proc.stderr.count("native dispatch layer is off") == 1


def _register_abs(fn):
    table = dict(registration.snapshot())
    table["abs"] = (fn, gems.Autograd.disable, "abs")
    registration.apply(table, gems.vendor().dispatch_key)


def test_an_implementation_that_computes_with_aten_stays_in_python():
    # A copy is work a plan cannot redo: every call of the signature must run the implementation.
    served = []

    def abs_via_copy(x):
        served.append(x)
        return torch.empty_like(x).copy_(x).abs_()

    _register_abs(abs_via_copy)
    for _ in range(3):
        x = torch.randn(11)
        assert torch.equal(torch.abs(x), aten(torch.abs, x))
    assert len(served) == 3 and native.call_counts().get("abs", 0) == 0
    assert native.plan_counts().get("abs") == 1  # the "Python only" entry
    assert "aten.copy_" in native.python_reasons()["abs"]  # and why, for a user asking why the call is slow


def test_a_view_result_stays_in_python():
    def abs_as_view(x):
        return x.view(x.shape)  # wrong on purpose: replay cannot express a view of an input

    _register_abs(abs_as_view)
    for _ in range(2):
        x = torch.randn(5)
        assert torch.abs(x).data_ptr() == x.data_ptr()
    assert native.call_counts().get("abs", 0) == 0
    assert native.python_reasons()["abs"] == "a result is not a fresh dense allocation"


def test_reregistering_an_overload_drops_its_plans():
    x = torch.randn(6)
    torch.abs(x)
    torch.abs(x)
    assert _counts("abs")[:2] == (1, 1)
    calls = []

    def negated_abs(t):
        calls.append(t)
        return torch.empty_like(t).copy_(t).abs_().neg_()

    _register_abs(negated_abs)
    assert torch.equal(torch.abs(x), -aten(torch.abs, x)) and len(calls) == 1


def test_unregistering_and_registering_the_same_implementation_keeps_its_plans():
    """gems-perf and the model harness time ATen by unregistering gems: registering it back must not send every
    warm signature through Python again."""
    x = torch.randn(6)
    torch.abs(x)
    torch.abs(x)
    with gems.use_gems(exclude=["abs"]):
        assert torch.equal(torch.abs(x), x.abs()) and _counts("abs")[:2] == (1, 1)  # ATen's, not counted
    assert torch.equal(torch.abs(x), aten(torch.abs, x))
    assert _counts("abs")[:2] == (1, 2)  # replayed: the plan survived


def test_creation_replays():
    for _ in range(3):
        assert torch.equal(torch.zeros(5, 3), aten(torch.zeros, 5, 3))
        assert torch.equal(torch.full((7,), 2.5), aten(torch.full, (7,), 2.5))
        assert torch.equal(torch.arange(9), aten(torch.arange, 9))
    assert _counts("zeros")[:2] == (1, 2) and _counts("full")[:2] == (1, 2) and _counts("arange")[:2] == (1, 2)


def test_build_failure_names_the_log(tmp_path):
    broken = tmp_path / "dispatch.cpp"
    broken.write_text("#error deliberately broken for a test\n")
    empty = tmp_path / "lists.cpp"  # nothing to compile beside the broken file (torch's headers take ~20 s)
    empty.write_text("")
    proc = _run_python("import pathlib, gems, torch; from gems import native;"
                       f"native.SOURCE = pathlib.Path({str(broken)!r});"
                       f"native.LISTS_SOURCE = pathlib.Path({str(empty)!r}); gems.enable();"
                       " x = torch.randn(5); assert torch.equal(torch.abs(x), x.abs());"
                       "print(gems.native_status()['reason'])", GEMS_CACHE_DIR=str(tmp_path / "cache"))
    assert proc.returncode == 0, proc.stderr
    assert "gems: building the native layer (first use, ~30 s)" in proc.stderr  # said while it builds
    reason = proc.stdout.strip()
    assert "failed to build" in reason and "log: " in reason
    log = Path(reason.split("log: ")[1])
    assert log.is_file() and "deliberately broken" in log.read_text()


# ------------------------------------------------------------------ autograd-level operators (Autograd.enable)


def test_an_autograd_level_operator_replays_when_no_graph_is_needed():
    w = torch.randn(24)
    with torch.no_grad():
        for _ in range(4):
            x = torch.randn(6, 24)
            torch.testing.assert_close(torch.nn.functional.rms_norm(x, (24,), w),
                                       aten(torch.nn.functional.rms_norm, x, (24,), w), rtol=1e-5, atol=1e-5)
    for _ in range(3):  # grad mode on, but nothing requires grad: no graph either
        x = torch.randn(6, 24)
        assert torch.equal(torch.isfinite(x), aten(torch.isfinite, x))
    assert _counts("rms_norm")[:2] == (1, 3) and _counts("isfinite")[:2] == (1, 2)


def test_an_autograd_level_operator_builds_its_graph_in_cpp_after_the_first_call():
    w = torch.randn(24, requires_grad=True)
    for step in range(3):
        x = torch.randn(6, 24, requires_grad=True)
        y = torch.nn.functional.rms_norm(x, (24,), w)
        assert y.grad_fn.name() == ("_RmsNormBackward" if step == 0 else "GemsRmsNormBackward")
        y.square().sum().backward()
        x2, w2 = x.detach().requires_grad_(), w.detach().requires_grad_()
        with gems.aten_only():
            torch.nn.functional.rms_norm(x2, (24,), w2).square().sum().backward()
        torch.testing.assert_close(x.grad, x2.grad, rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(w.grad, w2.grad, rtol=1e-4, atol=1e-4)
        w.grad = None
    assert _counts("rms_norm")[:2] == (1, 2)


def test_an_autograd_level_operator_over_growing_rows_replays_natively():
    w = torch.randn(32)
    with torch.no_grad():
        for rows in range(5, 30):
            x = torch.randn(rows, 32)
            torch.testing.assert_close(torch.nn.functional.rms_norm(x, (32,), w),
                                       aten(torch.nn.functional.rms_norm, x, (32,), w), rtol=1e-5, atol=1e-5)
    assert native.generic_counts().get("rms_norm", 0) >= 18


# ------------------------------------------------------------------ the build


def test_an_existing_build_is_loaded_without_compiling(monkeypatch):
    # The cache is keyed by what changes the binary, not by the venv: another venv with this torch loads it.
    import torch.utils.cpp_extension as cpp_extension

    def no_build(*args, **kwargs):
        raise AssertionError("the native layer was compiled again")

    monkeypatch.setattr(cpp_extension, "load", no_build)
    ext, reason = native._build()
    assert ext is not None and reason == ""
    sources = b"\0".join(path.read_bytes() for path in native.sources())
    assert Path(gems.native_status()["build_dir"]).name == native._build_tag(sources)


def test_a_random_call_at_a_new_size_keeps_exact_plans_and_says_why():
    """A size-generic plan would probe other sizes, which draws: random calls get exact plans per size."""
    for rows in (64, 80, 96):
        torch.randn(rows, 48)
    assert "random calls get exact plans only" in native.python_reasons()["randn"]
    before = native.calls_of("randn")
    first, second = torch.randn(96, 48), torch.randn(96, 48)
    assert native.calls_of("randn") == before + 2  # the exact plan of 96 rows replays, drawing fresh keys
    assert not torch.equal(first, second)


# ------------------------------------------------------------------ calls of many tensors (a BERT training step's)


def _attention_grads(query, key, value, bias, grad):
    """dq, dk, dv by autograd through ATen's math attention (the oracle)."""
    leaves = [t.detach().requires_grad_() for t in (query, key, value)]
    with gems.aten_only():
        out = torch.ops.aten._scaled_dot_product_attention_math(*leaves, attn_mask=bias)[0]
        return torch.autograd.grad(out, leaves, grad)


def test_attention_backward_of_nine_tensors_replays():
    """The cuDNN attention backward of a masked model: grad, query, key, value, out, lse, the two Philox tensors
    and the bias (a BERT training step calls it once per layer; a plan held 8 tensors before)."""
    cudnn = torch.ops.aten._scaled_dot_product_cudnn_attention
    for _ in range(3):
        q, k, v, grad = (torch.randn(2, 2, 16, 8) for _ in range(4))
        bias = torch.randn(2, 2, 16, 16)
        out, lse, _, _, max_q, max_k, seed, offset, _ = cudnn(q, k, v, bias, True)
        got = torch.ops.aten._scaled_dot_product_cudnn_attention_backward(
            grad, q, k, v, out, lse, seed, offset, bias, None, None, max_q, max_k, 0.0, False)
        for g, w in zip(got, _attention_grads(q, k, v, bias, grad)):
            torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-5)
    assert _counts("_scaled_dot_product_cudnn_attention_backward")[:2] == (1, 2)


def test_deterministic_mode_is_in_the_key():
    """Head dim 16 takes attention's one-pass backward on the interpreter (atomic dQ adds); once deterministic mode
    is on, a warm call must not replay that plan but record the two-kernel one (global_state's second bit)."""
    cudnn = torch.ops.aten._scaled_dot_product_cudnn_attention
    backward = torch.ops.aten._scaled_dot_product_cudnn_attention_backward
    q, k, v, grad = (torch.randn(1, 2, 16, 16) for _ in range(4))
    out, lse, _, _, max_q, max_k, seed, offset, _ = cudnn(q, k, v, None, True)
    args = (grad, q, k, v, out, lse, seed, offset, None, None, None, max_q, max_k, 0.0, False)
    for _ in range(2):
        backward(*args)
    assert _counts("_scaled_dot_product_cudnn_attention_backward")[:2] == (1, 1)
    previous = torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        first, second = backward(*args), backward(*args)
    finally:
        torch.use_deterministic_algorithms(previous[0], warn_only=previous[1])
    assert _counts("_scaled_dot_product_cudnn_attention_backward")[:2] == (2, 2)
    for a, b in zip(first, second):
        assert torch.equal(a, b)


def test_calls_of_up_to_16_tensors_replay_and_more_say_why():
    for n in (12, 16):
        for _ in range(3):
            parts = [torch.randn(3) for _ in range(n)]
            assert torch.equal(torch.cat(parts), aten(torch.cat, parts))
    assert _counts("cat")[:2] == (2, 4)
    parts = [torch.randn(3) for _ in range(17)]
    for _ in range(2):
        assert torch.equal(torch.cat(parts), aten(torch.cat, parts))
    assert _counts("cat")[:2] == (4, 4)
    assert native.python_reasons()["cat"] == "more than 16 tensors in one call"


def test_the_same_tensor_twice_past_the_eighth_is_planned_apart():
    """The key's aliasing word names, for each of up to 16 tensors, the first tensor it is: cat(x0..x9, x0, x11)
    reads x0 twice through one pointer, a plan that cat of twelve different tensors must not replay."""
    parts = [torch.randn(3) for _ in range(12)]
    aliased = parts[:10] + [parts[0], parts[11]]
    for _ in range(2):
        assert torch.equal(torch.cat(aliased), aten(torch.cat, aliased))
    assert _counts("cat")[:2] == (1, 1)
    assert torch.equal(torch.cat(parts), aten(torch.cat, parts))  # another signature: recorded, not replayed
    assert _counts("cat")[:2] == (2, 1)


def test_embedding_backward_of_expanded_indices_replays():
    """BERT's token type ids are a buffer expanded to the batch (strides (0, 1)): flattening them copies, which gems'
    copy kernel does inside the plan (Tensor.reshape's ATen copy left the call in Python)."""
    for _ in range(3):
        grad = torch.randn(2, 700, 8)
        ids = torch.randint(0, 5, (1, 700)).expand(2, 700)
        got = torch.ops.aten.embedding_dense_backward(grad, ids, 5, -1, False)
        want = aten(torch.ops.aten.embedding_dense_backward, grad, ids, 5, -1, False)
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    assert _counts("embedding_dense_backward")[:2] == (1, 2)


def test_index_of_broadcast_indices_replays_where_values_are_not_read_on_the_host(monkeypatch):
    """A padding mask indexed as mask[batch_idx, kv_idx] (a (b, 1, 1, 1) and a (1, 1, 1, n) index): the indices
    get one layout by gems' copy, inside the plan. Where kernels are interpreted the index values are checked on
    the host, which keeps the call in Python; with that check off (valid indices), as where kernels are compiled
    (they assert on the device), the warm calls replay."""
    from gems.ops.indexing import shared

    monkeypatch.setattr(shared, "_interpreted", [False])
    batch, kv = torch.arange(2).view(2, 1, 1, 1), torch.arange(16).view(1, 1, 1, 16)
    for _ in range(3):
        mask = torch.rand(2, 16) > 0.5
        assert torch.equal(mask[batch, kv], aten(torch.Tensor.__getitem__, mask, (batch, kv)))
    assert _counts("index.Tensor")[:2] == (1, 2)


def test_a_view_op_that_copies_keeps_the_call_in_python_and_says_so():
    def abs_after_reshape(x):
        x.expand(2, *x.shape).t().reshape(-1)  # no view possible: reshape copies, with ATen's kernel
        return torch.empty_like(x)

    _register_abs(abs_after_reshape)
    for _ in range(2):
        torch.abs(torch.randn(5))
    assert native.call_counts().get("abs", 0) == 0
    assert native.python_reasons()["abs"] == "it called aten.reshape.default, which copied (no view was possible)"
