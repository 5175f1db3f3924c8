"""Attention with dropout (gems/ops/attention/dropout.py): conformance samples of the fused overload that
``scaled_dot_product_attention`` picks for dropout on the device, and their verdict.

gems draws its own keep mask (ATen's Philox stream is not matched), so these are random samples
(``Sample.random``): the verdict regenerates the mask from the Philox key the forward returned
(philox_seed / philox_offset, flash's rng_state) with :func:`keep_mask_reference` (plain torch, independent of
the kernels) and then checks exactly, within the dtype's reduction tolerance, the output and the three
gradients against the float64 oracle :func:`dropout_oracle` that uses that mask. One statistical test on top:
the keep ratio of the mask, by Hoeffding at gems.testing.draws.ALPHA (a false-failure rate below 1e-6 per case,
as every random verdict: at the quick shapes' 1,248 mask values the bound is 0.082, at the full ones' 60,900
0.012).

Where ATen's SDPA takes no fused overload for dropout (CPU tensors: its math composite, whose dropout is
native_dropout; the simulated device likewise) each sample calls one of the fused overloads itself (the one
:data:`_DIRECT` names for its variant), which gems serves on any device: ATen has no kernel for them there, so
ATen's answer comes from their meta functions (:func:`meta_answer`: shapes and dtypes, which the harness compares;
the values are judged as on CUDA). So the interpreter's conformance, and its coverage report, reaches the dropout
paths of the overloads and kernels, at the quick shapes in a few seconds.
"""

from __future__ import annotations

import torch

from gems.ops.attention.dropout import keep_mask_reference, key_of
from gems.spec import Sample
from gems.testing import compare
from gems.testing.draws import bounded_mean
from gems.testing.samples_random_common import verdict_of

A = torch.ops.aten

# SDPBackend as _fused_sdp_choice numbers it -> the CUDA overload that takes dropout.
_DROPOUT_BACKENDS = {1: "_scaled_dot_product_flash_attention", 2: "_scaled_dot_product_efficient_attention",
                     3: "_scaled_dot_product_cudnn_attention"}
FLASH, EFFICIENT, CUDNN = _DROPOUT_BACKENDS.values()
# Variant -> the overload it calls where ATen's SDPA picks none for dropout: each of the three in turn (FlashAttention
# takes fp16 and bf16 only: cuDNN's for float32).
_DIRECT = {"dropout": CUDNN, "dropout-causal": EFFICIENT, "dropout-float-mask": EFFICIENT, "dropout-half": FLASH}


def _scores(q, kk, bias, causal, bottom_right=False):
    """S = Q K^T / sqrt(d) + bias in float64, causal positions -inf (top-left, or bottom-right)."""
    s = q @ kk.transpose(-1, -2) / q.shape[-1] ** 0.5
    if bias is not None:
        s = s + bias.cpu().double()
    if causal:
        m, n = s.shape[-2:]
        s = s.masked_fill(~torch.ones(m, n, dtype=torch.bool).tril(n - m if bottom_right else 0), float("-inf"))
    return s


def _kv_heads(q, t):
    """t's kv heads repeated for grouped-query attention."""
    return t.repeat_interleave(q.shape[1] // t.shape[1], dim=1)


def dropout_oracle(q, k, v, bias, causal, p, keep, grad_out, bottom_right=False):
    """(O, dQ, dK, dV) in float64 on the CPU: O = (softmax(S) * Z / (1 - p)) V, S = Q K^T / sqrt(d) + bias
    (causal: top-left, or bottom-right), kv heads repeated for grouped-query attention."""
    q, k, v = (t.detach().cpu().double().requires_grad_() for t in (q, k, v))
    kk, vv = _kv_heads(q, k), _kv_heads(q, v)
    out = (torch.softmax(_scores(q, kk, bias, causal, bottom_right), -1) * keep / (1 - p)) @ vv
    out.backward(grad_out.cpu().double())
    return out.detach(), q.grad, k.grad, v.grad


def weight_rounding_bound(q, k, v, bias, causal, p, keep, dtype) -> float:
    """The largest error that rounding the dropped, scaled weights P Z / (1 - p) to ``dtype`` before their product
    with V (as every fused attention kernel on a GPU does: the product runs on 16-bit operands) puts into one output
    element: unit roundoff x max over rows of sum_j |P_ij Z_ij / (1 - p)| |V_jd|. No ATen result can stand beside a
    random sample's (ATen draws another mask), so the output's tolerance takes this on top of the dtype's own."""
    if dtype not in (torch.float16, torch.bfloat16):
        return 0.0
    q, k, v = (t.detach().cpu().double() for t in (q, k, v))
    weights = torch.softmax(_scores(q, _kv_heads(q, k), bias, causal), -1) * keep / (1 - p)
    unit_roundoff = torch.finfo(dtype).eps / 2
    return unit_roundoff * (weights.nan_to_num() @ _kv_heads(q, v).abs()).max().item()


def dropout_choice(shape_q, shape_kv, dtype, device, mask, causal, p) -> str | None:
    """The fused overload ATen's SDPA runs for dropout p at these shapes on ``device``, or None (its math
    composite, or a backend that does not take dropout)."""
    if torch.device(device).type != "cuda":
        return None  # CPU tensors (and the simulated device's): SDPA's math composite, its dropout native_dropout
    q = torch.empty(shape_q, dtype=dtype, device=device)
    k = torch.empty(shape_kv, dtype=dtype, device=device)
    probe_mask = None if mask is None else torch.empty(mask, dtype=dtype, device=device)
    return _DROPOUT_BACKENDS.get(int(torch._fused_sdp_choice(q, k, k, probe_mask, p, causal)))


def dropout_call(overload: str):
    """The call of a sample: the overload's forward and, through its autograd formula, its backward for
    ``grad_out``; returns (out, philox_seed, philox_offset, dq, dk, dv) (flash: rng_state and its unused
    offset)."""
    def call(q, k, v, mask, p, causal, grad_out):
        if overload == "_scaled_dot_product_flash_attention":
            result = A._scaled_dot_product_flash_attention(q, k, v, p, causal)
            out, seed, offset = result[0], result[6], result[7]
        elif overload == "_scaled_dot_product_efficient_attention":
            out, _, seed, offset = A._scaled_dot_product_efficient_attention(q, k, v, mask, True, p, causal)
        else:
            result = A._scaled_dot_product_cudnn_attention(q, k, v, mask, True, p, causal)
            out, seed, offset = result[0], result[6], result[7]
        grads = torch.autograd.grad(out, (q, k, v), grad_out)
        return (out, seed, offset, *grads)

    call.__qualname__ = f"dropout_call({overload})"
    return call


def _judge(verdict, args, kwargs, outs):
    q, k, v, mask, p, causal, grad_out = args
    out, seed, offset, *grads = outs
    key = key_of(seed, offset) if seed.numel() == 1 else key_of(seed[0], seed[1])  # flash: rng_state (seed, offset)
    keep = keep_mask_reference(*key, (q.shape[0], q.shape[1], q.shape[2], k.shape[2]), p)
    bounded_mean(verdict, keep.double(), 1.0 - p, 1.0, "attention dropout keep ratio")
    want = dropout_oracle(q, k, v, mask, causal, p, keep, grad_out)
    tol = compare.default_tolerance(out.dtype, "reduction", max(k.shape[2], q.shape[3]))
    rounding = weight_rounding_bound(q, k, v, mask, causal, p, keep, out.dtype)
    for i, (got, expected) in enumerate(zip((out, *grads), want)):
        t = compare.Tolerance(tol.rtol, tol.atol + rounding) if i == 0 else compare.gradient_tolerance(tol, expected)
        verdict_i = compare.compare(got, expected, None, t)
        verdict.require(verdict_i.passed, f"{('out', 'dq', 'dk', 'dv')[i]} against the float64 oracle with gems' "
                                          f"keep mask: {verdict_i.message}")


DROPOUT_VERDICT = verdict_of(_judge)


def meta_answer(call):
    """ATen's answer to ``call`` where ATen has no kernel for it (the CUDA overloads on CPU tensors): its meta
    functions', forward and backward, as empty CPU tensors of their shapes and dtypes."""
    def reference(*args):
        meta = [t.detach().to("meta").requires_grad_(t.requires_grad) if isinstance(t, torch.Tensor) else t
                for t in args]
        return tuple(torch.zeros(o.shape, dtype=o.dtype) for o in call(*meta))

    reference.__qualname__ = f"meta_answer({call.__qualname__})"
    return reference


def dropout_samples(dtype, device, quick) -> list[Sample]:
    """SDPA's fused overloads with dropout, forward and backward: the one ATen's SDPA picks for dropout on CUDA,
    elsewhere the one :data:`_DIRECT` names."""
    from gems.testing.samples import make_tensor

    m, n = (13, 24) if quick else (150, 203)

    def case(variant, b, h, mq, nk, p, causal=False, mask=False, d=16 if quick else 64):
        mask_shape = (b, h, mq, nk) if mask else None
        overload = dropout_choice((b, h, mq, d), (b, h, nk, d), dtype, device, mask_shape, causal, p)
        reference = None
        if overload is None:  # the fused overload called directly (listing on the meta device comes here too)
            overload = _DIRECT[variant] if dtype != torch.float32 or _DIRECT[variant] != FLASH else CUDNN
            if torch.device(device).type != "cuda":
                reference = meta_answer(dropout_call(overload))

        def build():
            q, k, v = (make_tensor(s, dtype, device, low=-1.0, high=1.0).requires_grad_()
                       for s in ((b, h, mq, d), (b, h, nk, d), (b, h, nk, d)))
            bias = make_tensor(mask_shape, dtype, device, low=-2.0, high=2.0) if mask else None
            grad_out = make_tensor((b, h, mq, d), dtype, device, low=-1.0, high=1.0)
            return q, k, v, bias, p, causal, grad_out

        return Sample(variant, build, call=dropout_call(overload), expects=(overload, f"{overload}_backward"),
                      random=DROPOUT_VERDICT, reduction_size=max(nk, d), reference=reference)

    return [case("dropout", 2, 2, m, n, 0.3), case("dropout-causal", 1, 2, n, n, 0.1, causal=True),
            # a head dim that is not a power of 2: the kernels' loads masked along it
            case("dropout-float-mask", 1, 2, m, n, 0.2, mask=True, d=24 if quick else 72),
            case("dropout-half", 1, 2, m, n, 0.5)]
