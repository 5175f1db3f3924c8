"""Attention overloads beyond what conformance samples reach (interpreter vendor): the logsumexp's meaning,
empty sequences (ATen's CPU kernel crashes on them, so conformance cannot ask it), bottom-right causality of
_flash_attention_forward, dropout (gems' own keep mask against a float64 oracle that regenerates it, the keep ratio,
the generator's advance, forward and backward falling back alike) and ATen's errors before any launch."""

import os
import shutil

import pytest
import torch

import gems
from gems.ops.attention import decode, dropout, flash, flash_backward, sdpa_efficient, sdpa_flash
from gems.ops.attention.dropout import keep_mask_reference, key_of
from gems.ops.attention.flash_attention_forward import _flash_attention_backward, _flash_attention_forward
from gems.runtime import registration
from gems.testing.draws import FALSE_FAILURE_RATE, hoeffding
from gems.testing.samples_attention_dropout import DROPOUT_VERDICT, dropout_oracle

A = torch.ops.aten


@pytest.fixture(autouse=True)
def _restore_registration():
    previous = registration.snapshot()
    yield
    registration.apply(previous, gems.vendor().dispatch_key)


def _reference(q, k, v, mask):
    """Scores, natural-log lse and output in float64 (mask: additive, or None)."""
    q, k, v = (t.double() for t in (q, k, v))
    s = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
    if mask is not None:
        s = s + mask.double()
    return s.logsumexp(-1), torch.softmax(s, -1) @ v


def test_for_cpu_returns_the_natural_log_logsumexp_as_aten_does():
    torch.manual_seed(0)
    q, k, v = torch.randn(2, 3, 9, 16), torch.randn(2, 3, 21, 16), torch.randn(2, 3, 21, 16)
    mask = torch.randn(9, 21)
    with gems.use_gems(include=["scaled_dot_product_attention"]):
        out, lse = A._scaled_dot_product_flash_attention_for_cpu(q, k, v, attn_mask=mask)
        assert gems.call_counts()["gems"]["_scaled_dot_product_flash_attention_for_cpu"] >= 1
    aten_out, aten_lse = A._scaled_dot_product_flash_attention_for_cpu(q, k, v, attn_mask=mask)
    want_lse, want_out = _reference(q, k, v, mask)
    assert lse.shape == aten_lse.shape == (2, 3, 9) and lse.stride() == aten_lse.stride()
    torch.testing.assert_close(lse.double(), want_lse, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(out.double(), want_out, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("m, n", [(0, 7), (5, 0)])
def test_empty_sequences_give_empty_or_zero_results_and_gradients(m, n):
    q, k, v = torch.randn(1, 2, m, 16), torch.randn(1, 2, n, 16), torch.randn(1, 2, n, 16)
    out, lse = sdpa_flash._scaled_dot_product_flash_attention_for_cpu(q, k, v)
    assert out.shape == (1, 2, m, 16) and lse.shape == (1, 2, m)
    assert out.numel() == 0 or bool((out == 0).all())
    dq, dk, dv = sdpa_flash._scaled_dot_product_flash_attention_for_cpu_backward(
        torch.randn_like(out), q, k, v, out, lse, 0.0, False)
    assert dq.shape == q.shape and dk.shape == k.shape and dv.shape == v.shape
    assert all(bool((g == 0).all()) for g in (dq, dk, dv))


@pytest.mark.parametrize("m, n", [(6, 11), (11, 6)])
def test_flash_attention_forward_aligns_causality_bottom_right(m, n):
    torch.manual_seed(1)
    q, k, v = (torch.randn(1, s, 2, 16, dtype=torch.float64).float() for s in (m, n, n))
    out, lse, *_ = _flash_attention_forward(q, k, v, None, None, m, n, 0.0, True, False)
    keep = torch.ones(m, n, dtype=torch.bool).tril(diagonal=n - m)
    mask = torch.zeros(m, n).masked_fill(~keep, float("-inf"))
    want_lse, want_out = _reference(*(t.transpose(1, 2) for t in (q, k, v)), mask)
    seen = keep.any(-1)  # rows that see no key: output 0 and lse +inf, as FlashAttention writes them
    torch.testing.assert_close(out.transpose(1, 2)[..., seen, :].double(), want_out[..., seen, :], rtol=1e-5,
                               atol=1e-5)
    assert bool((out.transpose(1, 2)[..., ~seen, :] == 0).all()) and bool((lse[..., ~seen] == float("inf")).all())
    torch.testing.assert_close(lse[..., seen].double(), want_lse[..., seen], rtol=1e-5, atol=1e-5)
    grads = _flash_attention_backward(torch.ones_like(out), q, k, v, out, lse, None, None, m, n, 0.0, True,
                                      None, None)
    assert all(bool(torch.isfinite(g).all()) for g in grads)


def test_dropout_of_the_cpu_overloads_is_left_to_aten_with_its_reason():
    # ATen's CPU flash kernel refuses dropout (SDPA takes its math composite on CPU tensors), and so do gems'
    q = torch.randn(1, 2, 5, 16)
    with pytest.raises(gems.Fallback, match="dropout"):
        sdpa_flash._scaled_dot_product_flash_attention_for_cpu(q, q, q, 0.5)
    with pytest.raises(gems.Fallback, match="dropout"):
        sdpa_flash._scaled_dot_product_flash_attention_for_cpu_backward(q, q, q, q, q, torch.zeros(1, 2, 5), 0.5,
                                                                        False)


# --------------------------------------------------------------------------- dropout (gems' own keep mask)

@pytest.mark.parametrize("b, h, hk, m, n, d, causal, with_bias, p", [
    (2, 2, 2, 13, 24, 16, False, False, 0.3),
    (1, 4, 2, 24, 13, 24, True, True, 0.1),   # gqa, causal, an additive bias, odd sizes (N not a multiple of 4)
    (1, 2, 2, 1, 300, 16, False, False, 0.5),  # a decode shape: with dropout the tiled kernel, not split-KV
])
def test_cudnn_overloads_draw_one_keep_mask_for_forward_and_backward(b, h, hk, m, n, d, causal, with_bias, p):
    torch.manual_seed(3)
    q, k, v = torch.randn(b, h, m, d), torch.randn(b, hk, n, d), torch.randn(b, hk, n, d)
    bias = torch.randn(b, 1, m, n) if with_bias else None
    out, lse, _, _, _, _, seed, offset, _ = sdpa_efficient._scaled_dot_product_cudnn_attention(
        q, k, v, bias, True, p, causal)
    # ATen's forms (its meta function): 0-d int64 philox_seed and philox_offset
    assert seed.shape == offset.shape == () and seed.dtype == offset.dtype == torch.int64
    keep = keep_mask_reference(*key_of(seed, offset), (b, h, m, n), p)
    grad_out = torch.randn_like(out)
    grads = sdpa_efficient._scaled_dot_product_cudnn_attention_backward(
        grad_out, q, k, v, out, lse, seed, offset, bias, None, None, m, n, p, causal)
    want = dropout_oracle(q, k, v, bias, causal, p, keep, grad_out)
    for got, expected in zip((out, *grads), want):
        torch.testing.assert_close(got.double(), expected, rtol=1e-5, atol=1e-5)


# --------------------------------------------------------------------------- the backward's two paths

def _route(monkeypatch, path):
    """Force the backward's path (the vendor's ONE_PASS_MAX_KEYS) and list the kernels each call launches."""
    max_keys = 1 << 30 if path == "one-pass" else 0
    monkeypatch.setitem(flash_backward._ROUTE, "ONE_PASS_MAX_KEYS", lambda args: max_keys)
    launched = []

    def spy(launch):
        return lambda kernel, *args: launched.append(getattr(kernel, "fn", kernel).__name__) or launch(kernel, *args)

    monkeypatch.setattr(flash_backward, "_launch", spy(flash_backward._launch))
    monkeypatch.setattr(flash_backward, "launch_tuned", spy(flash_backward.launch_tuned))
    return launched


_TWO_KERNELS = ["_bwd_delta_kernel", "_bwd_dkdv_kernel", "_bwd_dq_kernel"]
_ONE_PASS = ["_bwd_delta_kernel", "_bwd_dkdv_kernel", "_bwd_dq_finish_kernel"]


@pytest.mark.parametrize("path", ["one-pass", "two-kernels"])
@pytest.mark.parametrize("b, h, hk, m, n, d, causal, bias_shape, p", [
    (2, 2, 2, 13, 24, 16, False, None, 0.0),
    (1, 4, 2, 24, 13, 24, True, (1, 1, 24, 13), 0.1),  # gqa, causal, a bias, dropout, odd sizes
    (1, 2, 1, 19, 37, 16, False, (1, 1, 1, 37), 0.3),  # a padding-mask-like bias (one row broadcast), gqa 2:1
    (1, 2, 2, 37, 19, 32, True, None, 0.0),  # causal with more queries than keys: the first keys' rows only
])
def test_both_backward_paths_match_a_float64_oracle(path, b, h, hk, m, n, d, causal, bias_shape, p, monkeypatch):
    launched = _route(monkeypatch, path)
    torch.manual_seed(5)
    q, k, v = torch.randn(b, h, m, d), torch.randn(b, hk, n, d), torch.randn(b, hk, n, d)
    bias = None if bias_shape is None else torch.randn(bias_shape)
    out, lse, _, _, _, _, seed, offset, _ = sdpa_efficient._scaled_dot_product_cudnn_attention(
        q, k, v, bias, True, p, causal)
    keep = keep_mask_reference(*key_of(seed, offset), (b, h, m, n), p)
    grad_out = torch.randn_like(out)
    launched.clear()
    grads = sdpa_efficient._scaled_dot_product_cudnn_attention_backward(
        grad_out, q, k, v, out, lse, seed, offset, bias, None, None, m, n, p, causal)
    assert launched == (_ONE_PASS if path == "one-pass" else _TWO_KERNELS)
    want = dropout_oracle(q, k, v, bias, causal, p, keep, grad_out)
    for got, expected in zip(grads, want[1:]):
        torch.testing.assert_close(got.double(), expected, rtol=1e-5, atol=1e-5)


def test_deterministic_mode_takes_the_two_kernel_path_and_repeats_itself(monkeypatch):
    launched = _route(monkeypatch, "one-pass")
    torch.manual_seed(6)
    q, k, v = torch.randn(1, 4, 21, 16), torch.randn(1, 2, 30, 16), torch.randn(1, 2, 30, 16)
    out, lse, *_ = sdpa_efficient._scaled_dot_product_cudnn_attention(q, k, v, None, True, 0.0, True)
    grad_out = torch.randn_like(out)

    def backward():
        return sdpa_efficient._scaled_dot_product_cudnn_attention_backward(
            grad_out, q, k, v, out, lse, None, None, None, None, None, 21, 30, 0.0, True)

    one_pass = backward()
    assert launched == _ONE_PASS
    previous = torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        launched.clear()
        first, second = backward(), backward()
    finally:
        torch.use_deterministic_algorithms(previous[0], warn_only=previous[1])
    assert launched == _TWO_KERNELS * 2
    for a, b, c in zip(first, second, one_pass):
        assert torch.equal(a, b)
        torch.testing.assert_close(a, c, rtol=1e-5, atol=1e-5)


def test_the_interpreter_route_sends_the_quick_samples_down_both_paths():
    """Head dim 16 takes the one-pass path, 24 and 32 the two kernels: conformance's quick samples run both in CI."""
    from pathlib import Path

    from gems.runtime import configs

    path = Path(gems.__file__).parent / "runtime/backend/_interpreter/heuristics/attention.py"
    rule = configs.load_heuristics(path)["attention_backward_route"]["ONE_PASS_MAX_KEYS"]
    for d, one_pass in ((16, True), (24, False), (32, False)):
        args = {"batch": 1, "heads": 2, "kv_heads": 2, "M": 13, "N": 24, "HEAD_DIM": d, "DROPOUT": d == 24}
        assert (args["N"] <= rule(args)) == one_pass


def test_flash_attention_forward_keeps_its_dropout_key_in_rng_state():
    torch.manual_seed(4)
    m, n, p = 6, 11, 0.25  # M < N: every row sees a key (bottom-right)
    q, k, v = (torch.randn(1, s, 2, 16) for s in (m, n, n))
    out, lse, rng_state, unused, _ = _flash_attention_forward(q, k, v, None, None, m, n, p, True, False)
    assert rng_state.shape == (2,) and rng_state.dtype == torch.uint64
    keep = keep_mask_reference(*key_of(rng_state[0], rng_state[1]), (1, 2, m, n), p)
    grad_out = torch.randn_like(out)
    grads = _flash_attention_backward(grad_out, q, k, v, out, lse, None, None, m, n, p, True, rng_state, unused)
    heads_first = [t.transpose(1, 2) for t in (q, k, v, grad_out)]
    want = dropout_oracle(*heads_first[:3], None, True, p, keep, heads_first[3], bottom_right=True)
    for got, expected in zip((out, *grads), want):
        torch.testing.assert_close(got.transpose(1, 2).double(), expected, rtol=1e-5, atol=1e-5)


def test_dropout_keys_follow_the_generator():
    q = torch.randn(1, 2, 5, 16)

    def key():
        result = sdpa_efficient._scaled_dot_product_efficient_attention(q, q, q, None, True, 0.5)
        return key_of(result[2], result[3]), result[0]

    torch.manual_seed(7)
    first, out_first = key()
    second, out_second = key()
    torch.manual_seed(7)
    again, out_again = key()
    assert first == again and first != second  # the same seed draws the same mask; the next call another
    assert torch.equal(out_first, out_again) and not torch.equal(out_first, out_second)


def test_keep_mask_reference_keeps_one_minus_p():
    """Hoeffding: P(|mean - (1 - p)| >= t) <= 2 exp(-2 n t^2); t for a false-failure rate of 1e-6 at n = 262,144
    draws is 0.0075 (gems.testing.draws.hoeffding); mask words of different lanes are independent Philox outputs."""
    n_values = 4 * 4 * 128 * 128
    t = hoeffding(n_values, FALSE_FAILURE_RATE)
    for seed, p in ((1, 0.1), (2**62 + 5, 0.5), (-3, 0.9)):
        keep = keep_mask_reference(seed, 8, (4, 4, 128, 128), p)
        assert abs(keep.double().mean().item() - (1 - p)) <= t


@pytest.mark.parametrize("dropout_p", [1.0])
def test_forward_and_backward_leave_the_same_dropout_inputs_to_aten(dropout_p):
    # an ATen-dropped forward must never meet gems' backward: both refuse what either refuses
    q = torch.randn(1, 2, 5, 16)
    lse = torch.zeros(1, 2, 5, 1)
    seed = torch.zeros((), dtype=torch.int64)
    with pytest.raises(gems.Fallback, match="dropout_p"):
        sdpa_efficient._scaled_dot_product_cudnn_attention(q, q, q, None, True, dropout_p)
    with pytest.raises(gems.Fallback, match="dropout_p"):
        sdpa_efficient._scaled_dot_product_cudnn_attention_backward(q, q, q, q, q, lse, seed, seed, None, None, None,
                                                                    5, 5, dropout_p, False)


def test_too_many_heads_with_dropout_are_refused_by_forward_and_backward_alike(monkeypatch):
    monkeypatch.setattr(dropout, "_MAX_GRID_Y", 1)
    q = torch.randn(1, 2, 5, 16)
    lse = torch.zeros(1, 2, 5, 1)
    seed = torch.zeros((), dtype=torch.int64)
    with pytest.raises(gems.Fallback, match="65535 heads"):
        sdpa_efficient._scaled_dot_product_cudnn_attention(q, q, q, None, True, 0.1)
    with pytest.raises(gems.Fallback, match="65535 heads"):
        sdpa_efficient._scaled_dot_product_cudnn_attention_backward(q, q, q, q, q, lse, seed, seed, None, None, None,
                                                                    5, 5, 0.1, False)


def test_a_debug_mask_with_dropout_is_refused_and_without_it_left_to_aten(monkeypatch):
    """ATen's forward would draw ATen's mask, which gems' backward cannot regenerate: a clear error instead."""
    launched = []
    monkeypatch.setattr(flash, "_launch", lambda *a: launched.append(a))
    q = torch.randn(1, 2, 5, 16, dtype=torch.float16)
    calls = [lambda p: sdpa_efficient._scaled_dot_product_cudnn_attention(q, q, q, None, True, p, False, True),
             lambda p: sdpa_efficient._scaled_dot_product_fused_attention_overrideable(q, q, q, None, p, False, True),
             lambda p: sdpa_flash._scaled_dot_product_flash_attention(q, q, q, p, False, True)]
    for call in calls:
        with pytest.raises(RuntimeError, match="return_debug_mask=True with dropout_p > 0"):
            call(0.1)
        with pytest.raises(gems.Fallback, match="debug attention mask"):
            call(0.0)
    assert not launched


@pytest.mark.parametrize("shapes, dtypes", [
    (((2, 5, 16), (1, 2, 7, 16), (1, 2, 7, 16)), None),          # a 3-D query
    (((1, 2, 5, 16), (1, 2, 7, 8), (1, 2, 7, 8)), None),         # head dims of q and k differ
    (((1, 2, 5, 16), (1, 2, 7, 16), (1, 2, 7, 16)), (torch.float32, torch.float64, torch.float32)),
])
def test_bad_inputs_raise_runtime_error_before_any_launch(shapes, dtypes, monkeypatch):
    launched = []
    monkeypatch.setattr(flash, "_launch", lambda *a: launched.append(a))
    dtypes = dtypes or (torch.float32,) * 3
    q, k, v = (torch.randn(s, dtype=d) for s, d in zip(shapes, dtypes))
    with pytest.raises(RuntimeError):
        sdpa_flash._scaled_dot_product_flash_attention_for_cpu(q, k, v)
    with pytest.raises(RuntimeError):
        A._scaled_dot_product_flash_attention_for_cpu(q, k, v)  # ATen refuses them too
    assert not launched


@pytest.mark.parametrize("scale", [0.7, -0.7])
def test_forward_of_a_negative_scale_is_right(scale):
    """The forward folds a positive scale into the exponent (max(s) * c == max(s * c) only for c > 0): a negative
    scale must take the general path and still agree with the float64 softmax."""
    torch.manual_seed(3)
    q, k, v = torch.randn(1, 2, 9, 16), torch.randn(1, 2, 37, 16), torch.randn(1, 2, 37, 16)
    out, lse = sdpa_flash._scaled_dot_product_flash_attention_for_cpu(q, k, v, scale=scale)
    s = (q.double() @ k.double().transpose(-1, -2)) * scale
    torch.testing.assert_close(lse.double(), s.logsumexp(-1), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(out.double(), torch.softmax(s, -1) @ v.double(), rtol=1e-5, atol=1e-5)


def test_perf_flash_variant_times_the_flash_overload_itself():
    """perf shape [b, h, s, d, causal, 1] calls ATen's flash overload directly (on CPU its _for_cpu one), served by
    gems, with (out, lse) as the result; without the trailing 1 the sample is SDPA's default call."""
    from gems.ops.attention.scaled_dot_product_attention import flash_path, sdpa_bytes, sdpa_perf_inputs

    assert sdpa_perf_inputs((1, 2, 19, 16, 1), torch.float32, "cpu").call is None
    sample = sdpa_perf_inputs((1, 2, 19, 16, 1, 1), torch.float32, "cpu")
    assert sample.call is flash_path
    with gems.use_gems(include=["scaled_dot_product_attention"]):
        before = gems.call_counts()["gems"].get("_scaled_dot_product_flash_attention_for_cpu", 0)
        out, lse = sample.call(*sample.args)
        assert gems.call_counts()["gems"]["_scaled_dot_product_flash_attention_for_cpu"] == before + 1
    want = torch.nn.functional.scaled_dot_product_attention(*(t.double() for t in sample.args[:3]), is_causal=True)
    torch.testing.assert_close(out.double(), want, rtol=1e-5, atol=1e-5)
    assert sdpa_bytes(sample, (out, lse)) == 4 * (4 * 2 * 19 * 16 + 2 * 19)


@pytest.mark.parametrize("query_layout", ["heads-major", "sequence-major"])
def test_for_cpu_outputs_have_the_strides_of_atens_meta_function(query_layout):
    """torch.compile's graphs are built from the meta functions' strides (a later view() relies on them): gems'
    outputs and gradients must be laid out as those say, whatever the inputs' layout."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    def qkv():
        if query_layout == "sequence-major":  # (batch, M, heads, D) in memory, as a model's projections make it
            return tuple(torch.randn(2, 9, h, 16).transpose(1, 2) for h in (4, 2, 2))
        return torch.randn(2, 4, 9, 16), torch.randn(2, 2, 9, 16), torch.randn(2, 2, 9, 16)

    q, k, v = qkv()
    fake = FakeTensorMode()
    with fake:
        fq, fk, fv = (fake.from_tensor(t) for t in (q, k, v))
        want_out, want_lse = A._scaled_dot_product_flash_attention_for_cpu(fq, fk, fv, is_causal=True)
        want_grads = A._scaled_dot_product_flash_attention_for_cpu_backward(
            torch.empty_like(want_out), fq, fk, fv, want_out, want_lse, 0.0, True)
    with gems.use_gems(include=["scaled_dot_product_attention"]):
        out, lse = A._scaled_dot_product_flash_attention_for_cpu(q, k, v, is_causal=True)
        grads = A._scaled_dot_product_flash_attention_for_cpu_backward(torch.randn_like(out), q, k, v, out, lse, 0.0,
                                                                       True)
        assert gems.call_counts()["gems"]["_scaled_dot_product_flash_attention_for_cpu_backward"] >= 1
    assert (out.stride(), lse.stride()) == (want_out.stride(), want_lse.stride())
    assert [g.stride() for g in grads] == [g.stride() for g in want_grads]


_CUDA_OVERLOADS = {  # overload -> (its forward call, its backward call from the forward's results)
    "efficient": (lambda q, k, v, p: A._scaled_dot_product_efficient_attention(q, k, v, None, True, p, False),
                  lambda g, q, k, v, p, r: A._scaled_dot_product_efficient_attention_backward(
                      g, q, k, v, None, r[0], r[1], r[2], r[3], p, [True, True, True, False], False)[:3]),
    "cudnn": (lambda q, k, v, p: A._scaled_dot_product_cudnn_attention(q, k, v, None, True, p, False),
              lambda g, q, k, v, p, r: A._scaled_dot_product_cudnn_attention_backward(
                  g, q, k, v, r[0], r[1], r[6], r[7], None, None, None, q.shape[2], k.shape[2], p, False)),
    "flash": (lambda q, k, v, p: A._scaled_dot_product_flash_attention(q, k, v, p, False),
              lambda g, q, k, v, p, r: A._scaled_dot_product_flash_attention_backward(
                  g, q, k, v, r[0], r[1], None, None, q.shape[2], k.shape[2], p, False, r[6], r[7])),
}


@pytest.mark.parametrize("overload", list(_CUDA_OVERLOADS))
@pytest.mark.parametrize("query_layout", ["heads-major", "sequence-major", "packed"])
@pytest.mark.parametrize("p", [0.0, 0.3])
def test_cuda_overloads_lay_out_outputs_and_gradients_as_their_meta_functions(overload, query_layout, p):
    """The layouts ATen's CUDA kernels return, which their meta functions state (the H200's conformance compares
    the kernels' strides): the memory-efficient path's output and gradients (batch, M, heads, D) in memory
    whatever the inputs' layout; cuDNN's and FlashAttention's in the layout of the query (and of key, value)."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    def qkv(device):
        shape, dtype = (2, 13, 2, 16), torch.float16
        if query_layout == "packed":  # one projection's output, split (batch, M, 3, heads, D)
            qkv = torch.randn(2, 13, 3, 2, 16, device=device).to(dtype)
            return tuple(qkv.select(2, i).transpose(1, 2) for i in range(3))
        if query_layout == "sequence-major":
            return tuple(torch.randn(shape, device=device).to(dtype).transpose(1, 2) for _ in range(3))
        return tuple(torch.randn(2, 2, 13, 16, device=device).to(dtype) for _ in range(3))

    forward, backward = _CUDA_OVERLOADS[overload]
    with FakeTensorMode():
        q, k, v = qkv("cuda")
        want = forward(q, k, v, p)
        want_grads = backward(torch.empty_like(want[0]), q, k, v, p, want)
    q, k, v = qkv("cpu")
    with gems.use_gems(include=["scaled_dot_product_attention"]):
        got = forward(q, k, v, p)
        got_grads = backward(torch.randn_like(got[0]), q, k, v, p, got)
    assert got[0].stride() == want[0].stride()
    assert [t.stride() for t in got_grads] == [t.stride() for t in want_grads]


def _counting_decode_launches(monkeypatch):
    launched = []
    for name in ("_chunks", "_combine"):
        launcher = getattr(decode, name)
        monkeypatch.setattr(decode, name, lambda grid, *args, _name=name, _launch=launcher, **options:
                            launched.append((_name, grid)) or _launch(grid, *args, **options))
    return launched


@pytest.mark.parametrize("b, h, hk, m, n, split", [
    (1, 8, 2, 1, 300, True),     # 2 (batch, kv head) programs: the interpreter's rule splits the keys 4 ways
    (2, 4, 4, 1, 300, False),    # 8 programs: unsplit, the chunk kernel writes the output itself
    (1, 4, 1, 16, 1000, True),   # 64 rows of a group in one tile
])
def test_few_query_rows_over_many_keys_take_the_split_kv_kernels(b, h, hk, m, n, split, monkeypatch):
    launched = _counting_decode_launches(monkeypatch)
    torch.manual_seed(4)
    q, k, v = torch.randn(b, h, m, 16), torch.randn(b, hk, n, 16), torch.randn(b, hk, n, 16)
    mask = torch.randn(b, h, m, n)
    mask[..., 0, :] = float("-inf")  # a row every key is masked out of: output 0, lse 0 as ATen's CPU kernel
    out, lse = sdpa_flash._scaled_dot_product_flash_attention_for_cpu(q, k, v, attn_mask=mask)
    assert [name for name, _ in launched] == (["_chunks", "_combine"] if split else ["_chunks"])
    assert launched[0][1] == ((4 if split else 1), b * hk)
    group = h // hk
    want_lse, want_out = _reference(q, k.repeat_interleave(group, 1), v.repeat_interleave(group, 1), mask)
    torch.testing.assert_close(out[..., 1:, :].double(), want_out[..., 1:, :], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(lse[..., 1:].double(), want_lse[..., 1:], rtol=1e-5, atol=1e-5)
    aten_out, aten_lse = A._scaled_dot_product_flash_attention_for_cpu(q, k.repeat_interleave(group, 1),
                                                                      v.repeat_interleave(group, 1), attn_mask=mask)
    assert torch.equal(out[..., 0, :], aten_out[..., 0, :]) and torch.equal(lse[..., 0], aten_lse[..., 0])


def test_short_key_sequences_and_many_rows_stay_on_the_tiled_kernel(monkeypatch):
    launched = _counting_decode_launches(monkeypatch)
    for m, n, h in ((1, 256, 2), (65, 300, 1), (17, 300, 4)):  # 256 keys; 65 rows; 4 x 17 = 68 rows of a group
        q, k = torch.randn(1, h, m, 16), torch.randn(1, 1, n, 16)
        sdpa_flash._scaled_dot_product_flash_attention_for_cpu(q, k, k)
    assert launched == []


@pytest.mark.parametrize("m", [1, 3])
def test_split_kv_decode_aligns_causality_bottom_right(m, monkeypatch):
    """_flash_attention_forward's decode step: the query rows are the last m of the sequence (bottom-right)."""
    launched = _counting_decode_launches(monkeypatch)
    torch.manual_seed(5)
    n = 290
    q, k, v = torch.randn(1, m, 4, 16), torch.randn(1, n, 2, 16), torch.randn(1, n, 2, 16)
    out, lse, *_ = _flash_attention_forward(q, k, v, None, None, m, n, 0.0, True, False)
    assert [name for name, _ in launched] == ["_chunks", "_combine"]
    keep = torch.ones(m, n, dtype=torch.bool).tril(diagonal=n - m)
    mask = torch.zeros(m, n).masked_fill(~keep, float("-inf"))
    kk, vv = (t.transpose(1, 2).repeat_interleave(2, 1) for t in (k, v))
    want_lse, want_out = _reference(q.transpose(1, 2), kk, vv, mask)
    torch.testing.assert_close(out.transpose(1, 2).double(), want_out, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(lse.double(), want_lse, rtol=1e-5, atol=1e-5)


def test_nvidia_split_rule_fills_an_h100_and_is_constant_over_a_size_bucket(monkeypatch):
    """The nvidia vendor's "attention_decode" SPLITS for Llama-3-8B's decode (8 kv heads, 4 query rows each) on an
    H100's 132 multiprocessors, as decode.decode_config passes N (by its next power of two)."""
    from pathlib import Path

    from gems.ops.blas import tuning
    from gems.runtime import configs

    monkeypatch.setattr(tuning, "multiprocessors", lambda device: 132)
    path = Path(gems.__file__).parent / "runtime/backend/_nvidia/heuristics/attention.py"
    rules = configs.load_heuristics(path)["attention_decode"]

    def splits(batch, n):
        args = {"batch": batch, "kv_heads": 8, "rows": 4, "N": decode.next_power_of_2(n), "HEAD_DIM": 128,
                "q_ptr": torch.empty(0, device="meta")}
        for name, rule in rules.items():
            args[name] = rule(args)
        return args["SPLITS"]

    assert [splits(1, n) for n in (512, 2048, 8192)] == [4, 16, 32]  # 32, 128, 256 programs
    assert [splits(32, n) for n in (512, 2048, 8192)] == [2, 2, 2]
    assert {splits(1, n) for n in range(2049, 4097, 97)} == {32}


@pytest.mark.skipif(shutil.which(os.environ.get("CXX", "c++")) is None,
                    reason="no C++ compiler: the native layer cannot be built here")
@pytest.mark.usefixtures("gems_enabled")
def test_a_decode_loop_over_a_growing_kv_cache_replays_the_split_kernels_natively():
    """The split count and the scratch are functions of the key length's power of two: the native layer's
    size-generic plans replay a growing cache's decode steps (the first of each bucket and specialization class
    takes Python), with ATen's answers."""
    from gems import native

    torch.manual_seed(6)
    q = torch.randn(1, 4, 1, 16)
    k_cache, v_cache = torch.randn(1, 2, 560, 16), torch.randn(1, 2, 560, 16)
    sizes = range(250, 560, 9)  # 250 on the tiled kernel, then the split-KV ones
    for n in sizes:
        k, v = k_cache[:, :, :n], v_cache[:, :, :n]
        got = torch.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        with gems.aten_only():
            want = torch.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    overload = "_scaled_dot_product_flash_attention_for_cpu"
    python = sum(native.python_calls().get(overload, {}).values())
    # Python: 250 (the family's first call), 259 and 520 (new power-of-two buckets), 304 (divisible by 16: another
    # Triton specialization); the other 31 steps are native replays of size-generic plans.
    assert python == 4
    assert native.generic_counts()[overload] == len(sizes) - python


def test_the_conformance_verdict_of_dropout_passes_gems_and_catches_another_mask():
    """The CUDA samples' verdict (gems/testing/samples_attention_dropout.py), given what gems' cudnn overloads
    return on the CPU: it passes them, and fails them once the key says another mask."""
    torch.manual_seed(5)
    q, k, v = (torch.randn(1, 2, s, 16) for s in (9, 20, 20))
    grad_out = torch.randn(1, 2, 9, 16)
    out, lse, _, _, _, _, seed, offset, _ = sdpa_efficient._scaled_dot_product_cudnn_attention(
        q, k, v, None, True, 0.3, False)
    grads = sdpa_efficient._scaled_dot_product_cudnn_attention_backward(
        grad_out, q, k, v, out, lse, seed, offset, None, None, None, 9, 20, 0.3, False)
    args = (q, k, v, None, 0.3, False, grad_out)
    assert DROPOUT_VERDICT.check(args, {}, [out, seed, offset, *grads]) == ""
    wrong = DROPOUT_VERDICT.check(args, {}, [out, seed, offset + 4, *grads])
    assert "float64 oracle" in wrong


def test_dropout_samples_on_cpu_tensors_call_each_overload_and_take_atens_shapes_from_its_meta_functions():
    """ATen has no CPU kernel for the CUDA overloads: a dropout sample's ATen answer is their meta functions', whose
    shapes and dtypes gems' results must have (the conformance case compares those, not strides)."""
    from gems.ops.attention.scaled_dot_product_attention import sdpa_samples
    from gems.testing.cases import layout_differs

    samples = [s.built() for s in sdpa_samples(torch.float16, "cpu", True) if s.random is not None]
    assert sorted(s.expects[0] for s in samples) == sorted([
        "_scaled_dot_product_cudnn_attention", "_scaled_dot_product_efficient_attention",
        "_scaled_dot_product_efficient_attention", "_scaled_dot_product_flash_attention"])
    for sample in samples:
        want = sample.reference(*sample.args)
        with pytest.raises(NotImplementedError):  # ATen itself: no kernel on the CPU
            sample.call(*sample.args)
        with gems.use_gems(include=["scaled_dot_product_attention"]):
            got = sample.call(*sample.args)
        assert layout_differs(got, want, strides=False) == ""
        assert layout_differs(got[:1], [torch.zeros(1)], strides=False) != ""


@pytest.mark.skipif(shutil.which(os.environ.get("CXX", "c++")) is None, reason="no C++ compiler: no native layer")
@pytest.mark.usefixtures("gems_enabled")
def test_dropout_calls_replayed_by_the_native_layer_take_fresh_keys():
    # the native layer records the call's Philox key words (philox_key -> record.DrawnWord): its replays must draw
    # a new key each, and the backward must regenerate each call's own mask
    from gems import native

    op = torch.ops.aten._scaled_dot_product_cudnn_attention
    torch.manual_seed(6)
    q, k, v = torch.randn(1, 2, 7, 16), torch.randn(1, 2, 12, 16), torch.randn(1, 2, 12, 16)
    grad_out = torch.randn(1, 2, 7, 16)
    keys = set()
    for _ in range(4):
        qq, kk, vv = (t.clone().requires_grad_() for t in (q, k, v))
        out, _, _, _, _, _, seed, offset, _ = op(qq, kk, vv, None, True, 0.4, False)
        grads = torch.autograd.grad(out, (qq, kk, vv), grad_out)
        key = key_of(seed, offset)
        keys.add(key)
        want = dropout_oracle(q, k, v, None, False, 0.4, keep_mask_reference(*key, (1, 2, 7, 12), 0.4), grad_out)
        for got, expected in zip((out, *grads), want):
            torch.testing.assert_close(got.double(), expected, rtol=1e-5, atol=1e-5)
    assert len(keys) == 4
    served_in_python = sum(native.python_calls().get("_scaled_dot_product_cudnn_attention", {}).values())
    assert served_in_python < 4 or not native.status()["active"]  # replays happened where the native layer runs
