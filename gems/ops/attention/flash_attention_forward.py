"""flash_attention_forward: ``_flash_attention_forward``, FlashAttention's own entry point (q, k, v as
(batch, seq, heads, dim)), and its derivative ``_flash_attention_backward``. Its causal mask aligns
bottom-right when M != N (query i sees keys j <= i + N - M), unlike SDPA's. Variable-length batches
(cum_seq_q/k), sliding windows, ALiBi, paged KV caches and split counts are left to ATen (Fallback).
Kernels: gems/ops/attention/flash.py. ATen has this overload only on CUDA: elsewhere there is nothing to
compare with, and its samples are skipped.
"""

from __future__ import annotations

import torch

from gems.ops.attention.checks import check_debug_mask, check_inputs
from gems.ops.attention.decode import attention_forward
from gems.ops.attention.flash_backward import attention_backward
from gems.ops.attention.sdpa_flash import rng_dropout, rng_saved
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, Sample


def _heads_first(*tensors):  # unreached on the interpreter: the CUDA-only overloads'
    return [t.transpose(1, 2) if t.dim() == 4 else t for t in tensors]


def _unsupported(cum_seq_q, cum_seq_k, **extras):  # unreached on the interpreter: the CUDA-only overloads'
    if cum_seq_q is not None or cum_seq_k is not None:
        raise Fallback("variable-length batches (cum_seq_q/cum_seq_k) are left to ATen")
    named = [name for name, value in extras.items() if value is not None]
    if named:
        raise Fallback(f"{', '.join(named)} left to ATen")


def _flash_attention_forward(  # unreached on the interpreter: ATen's is CUDA only
        query, key, value, cum_seq_q, cum_seq_k, max_q, max_k, dropout_p, is_causal, return_debug_mask, *, scale=None,
        window_size_left=None, window_size_right=None, seqused_k=None, alibi_slopes=None, block_table=None,
        num_splits=None):
    q, k, v = _heads_first(query, key, value)
    check_inputs("_flash_attention_forward", q, k, v, dropout_p=dropout_p, gqa=True, dropout=True)
    _unsupported(cum_seq_q, cum_seq_k, window_size_left=window_size_left, window_size_right=window_size_right,
                 seqused_k=seqused_k, alibi_slopes=alibi_slopes, block_table=block_table, num_splits=num_splits)
    check_debug_mask("_flash_attention_forward", return_debug_mask, dropout_p)
    b, m, h, _ = query.shape
    out = torch.empty((b, m, h, value.shape[3]), dtype=query.dtype, device=query.device)
    lse = torch.empty((b, h, m), dtype=torch.float32, device=query.device)
    rng_state = torch.empty(2, dtype=torch.uint64, device=query.device)
    attention_forward(q, k, v, None, is_causal, scale, out.transpose(1, 2), lse, empty_lse=float("inf"),
                      bottom_right=True, dropout=rng_dropout(q, dropout_p, rng_state))
    unused = torch.empty((), dtype=torch.uint64, device=query.device)
    return out, lse, rng_state, unused, torch.empty(0, dtype=query.dtype, device=query.device)


def _flash_attention_backward(grad_out, query, key, value, out, logsumexp, cum_seq_q, cum_seq_k, max_q, max_k,
                              dropout_p, is_causal, rng_state, unused, *, scale=None, window_size_left=None,
                              window_size_right=None):  # unreached on the interpreter: ATen's is CUDA only
    q, k, v, g, o = _heads_first(query, key, value, grad_out, out)
    check_inputs("_flash_attention_backward", q, k, v, dropout_p=dropout_p, gqa=True, dropout=True)
    _unsupported(None if cum_seq_q is None or cum_seq_q.numel() == 0 else cum_seq_q,
                 None if cum_seq_k is None or cum_seq_k.numel() == 0 else cum_seq_k,
                 window_size_left=window_size_left, window_size_right=window_size_right)
    dq, dk, dv = torch.empty_like(query), torch.empty_like(key), torch.empty_like(value)
    attention_backward(g, q, k, v, o, logsumexp, None, is_causal, scale, *_heads_first(dq, dk, dv),
                       bottom_right=True, dropout=rng_saved(dropout_p, rng_state))
    return dq, dk, dv


def _call(q, k, v, causal):
    """The forward's output and logsumexp (its RNG state and debug mask are not results)."""
    out = torch.ops.aten._flash_attention_forward(q, k, v, None, None, q.shape[1], k.shape[1], 0.0, causal, False)
    return out[0], out[1]


def flash_forward_samples(dtype, device, quick):
    from gems.testing.samples import make_tensor

    d = 32 if quick else 128
    m, n = (13, 24) if quick else (150, 203)

    def mk(shape, grad=False):
        t = make_tensor(shape, dtype, device, low=-1.0, high=1.0)
        return t.requires_grad_() if grad else t

    fwd = ("_flash_attention_forward",)
    both = ("_flash_attention_forward", "_flash_attention_backward")
    keys = max(n, d)  # every output is a sum over the keys (and each score one over the head dim)
    # ATen's CUDA kernel is the only reference (no CPU oracle): its rounding adds to gems', hence reduction_size
    return [
        Sample("contiguous", lambda: (mk((2, m, 2, d)), mk((2, n, 2, d)), mk((2, n, 2, d)), False), expects=fwd,
               reduction_size=keys),
        Sample("causal-bottom-right", lambda: (mk((1, m, 2, d)), mk((1, n, 2, d)), mk((1, n, 2, d)), True),
               expects=fwd, reduction_size=keys),
        Sample("gqa", lambda: (mk((1, m, 4, d)), mk((1, n, 2, d)), mk((1, n, 2, d)), False), expects=fwd,
               reduction_size=keys),
        # a decode step over a KV cache (decode.py's split-KV kernels): its 2 query rows are the cache's last
        Sample("decode-causal-gqa", lambda: (mk((2, 2, 4, d)), mk((2, 300, 2, d)), mk((2, 300, 2, d)), True),
               expects=fwd, reduction_size=300),
        Sample("grad", lambda: (mk((1, m, 2, d), True), mk((1, n, 2, d), True), mk((1, n, 2, d), True), False),
               grad=True, expects=both, reduction_size=keys),
        Sample("grad-causal", lambda: (mk((1, n, 2, d), True), mk((1, m, 2, d), True), mk((1, m, 2, d), True), True),
               grad=True, expects=both, reduction_size=keys),
    ]


_NO_ATEN = "ATen has _flash_attention_forward only on CUDA: there is no ATen answer to compare with"

SPECS = [
    OpSpec(
        name="flash_attention_forward", family="attention",
        impls={"_flash_attention_forward": _flash_attention_forward,
               "_flash_attention_backward": _flash_attention_backward},
        call=_call, samples=flash_forward_samples, dtypes=(torch.float16, torch.bfloat16),
        tolerance="reduction",
        skips={("interpreter", "*", "*"): _NO_ATEN, ("sim", "*", "*"): _NO_ATEN},
    ),
]
