"""The attention overloads with an additive bias that ``scaled_dot_product_attention`` reaches, forward and
backward (one family: the same arguments, masks, and a logsumexp for the backward):

- ``_scaled_dot_product_efficient_attention`` (CUDA's memory-efficient path: masks, fp32, causal with
  M != N) and its ``_backward``; its logsumexp is (batch, heads, M rounded up to 32), only when
  ``compute_log_sumexp``, and +inf on rows that every key is masked out of, as ATen's kernel leaves them;
- ``_scaled_dot_product_cudnn_attention`` (CUDA's cuDNN path) and its ``_backward``: lse (batch, heads, M, 1);
- ``_scaled_dot_product_fused_attention_overrideable`` (an out-of-tree PrivateUse1 device's fused path) and
  its ``_backward``: lse (batch, heads, M).

With dropout_p > 0 each draws gems' own keep mask (gems/ops/attention/dropout.py): the forward returns the
Philox key it used as philox_seed / philox_offset (int64 0-d tensors on the query's device, the forms of ATen's
meta functions), which the backward reads on the device to regenerate the mask.

A gradient for the bias itself (``grad_input_mask[3]``) is left to ATen (Fallback). Kernels:
gems/ops/attention/flash.py; declaration: scaled_dot_product_attention.py.
"""

from __future__ import annotations

import torch

from gems.ops.attention.checks import check_debug_mask, check_inputs
from gems.ops.attention.decode import attention_forward
from gems.ops.attention.flash_backward import attention_backward
from gems.ops.attention.sdpa_flash import empty_in_order, in_layout_of
from gems.ops.random.philox import philox_key
from gems.runtime.registration import Fallback

# ATen's memory-efficient kernel pads its logsumexp rows to a multiple of this.
_LSE_ALIGN = 32


def _checked(name, query, key, value, attn_bias, dropout_p, gqa=False):
    check_inputs(name, query, key, value, attn_bias, dropout_p, gqa, dropout=True)
    if attn_bias is not None and attn_bias.dtype != query.dtype:
        raise RuntimeError(f"{name}: invalid dtype for bias - should match query's dtype ({attn_bias.dtype} and "
                           f"{query.dtype})")


def _forward(query, key, value, attn_bias, is_causal, scale, lse_rows, dropout_p=0.0, out_like_query=False):
    """(out, lse, philox_seed, philox_offset); the seeds hold the dropout key (unwritten without dropout). out is
    laid out (batch, M, heads, Dv) in memory as ATen's memory-efficient kernel writes it, or in the query's
    layout (``out_like_query``) as its cuDNN path allocates it."""
    b, h, m, _ = query.shape
    shape = (b, h, m, value.shape[3])
    out = in_layout_of(query, shape) if out_like_query else empty_in_order(shape, (0, 2, 1, 3), query)
    lse = torch.empty((b, h, lse_rows), dtype=torch.float32, device=query.device)
    full = lse if lse_rows >= m else torch.empty((b, h, m), dtype=torch.float32, device=query.device)
    seed, offset = _seeds(query)
    dropout = None
    if dropout_p > 0.0:
        dropout = (dropout_p, philox_key(query.device, None), seed, offset)
    attention_forward(query, key, value, attn_bias, is_causal, scale, out, full, empty_lse=float("inf"),
                      dropout=dropout)
    return out, lse, seed, offset


def _backward(
        grad_out, query, key, value, attn_bias, out, logsumexp, is_causal, scale, dropout_p=0.0, philox_seed=None,
        philox_offset=None, grads=None):
    dq, dk, dv = grads or (torch.empty_like(query), torch.empty_like(key), torch.empty_like(value))
    dropout = (dropout_p, philox_seed, philox_offset) if dropout_p > 0.0 else None
    attention_backward(grad_out, query, key, value, out, logsumexp, attn_bias, is_causal, scale, dq, dk, dv,
                       dropout=dropout)
    return dq, dk, dv


def _efficient_grads(query, key, value):
    """dQ, dK, dV laid out (batch, rows, heads, dim) in memory whatever the inputs' layout, as ATen's
    memory-efficient backward and its meta function (which torch.compile's graphs rely on) lay them out."""
    return tuple(empty_in_order(t.shape, (0, 2, 1, 3), t) for t in (query, key, value))


def _no_bias_grad(grad_input_mask, attn_bias):
    if attn_bias is not None and grad_input_mask[3]:
        raise Fallback("the gradient of the attention bias is left to ATen")


def _seeds(query):
    return (torch.empty((), dtype=torch.int64, device=query.device),
            torch.empty((), dtype=torch.int64, device=query.device))


def _scaled_dot_product_efficient_attention(
        query, key, value, attn_bias, compute_log_sumexp, dropout_p=0.0, is_causal=False, *, scale=None):
    _checked("_scaled_dot_product_efficient_attention", query, key, value, attn_bias, dropout_p)
    m = query.shape[2]
    rows = -(-m // _LSE_ALIGN) * _LSE_ALIGN if compute_log_sumexp else 0
    return _forward(query, key, value, attn_bias, is_causal, scale, rows, dropout_p)


def _scaled_dot_product_efficient_attention_backward(
        grad_out_, query, key, value, attn_bias, out, logsumexp, philox_seed, philox_offset, dropout_p, grad_input_mask,
        is_causal=False, *, scale=None):
    _checked("_scaled_dot_product_efficient_attention_backward", query, key, value, attn_bias, dropout_p)
    _no_bias_grad(grad_input_mask, attn_bias)
    lse = logsumexp[:, :, : query.shape[2]]
    return (*_backward(grad_out_, query, key, value, attn_bias, out, lse, is_causal, scale, dropout_p, philox_seed,
                       philox_offset, _efficient_grads(query, key, value)), None)


def _scaled_dot_product_cudnn_attention(
        query, key, value, attn_bias, compute_log_sumexp, dropout_p=0.0, is_causal=False, return_debug_mask=False, *,
        scale=None):
    _checked("_scaled_dot_product_cudnn_attention", query, key, value, attn_bias, dropout_p, gqa=True)
    check_debug_mask("_scaled_dot_product_cudnn_attention", return_debug_mask, dropout_p)
    b, h, m, _ = query.shape
    out, lse, seed, offset = _forward(query, key, value, attn_bias, is_causal, scale, m, dropout_p,
                                      out_like_query=True)
    return (out, lse.unsqueeze(3), None, None, m, key.shape[2], seed, offset, None)


def _scaled_dot_product_cudnn_attention_backward(
        grad_out, query, key, value, out, logsumexp, philox_seed, philox_offset, attn_bias, cum_seq_q, cum_seq_k, max_q,
        max_k, dropout_p, is_causal, *, scale=None):
    _checked("_scaled_dot_product_cudnn_attention_backward", query, key, value, attn_bias, dropout_p, gqa=True)
    lse = logsumexp.reshape(query.shape[:3]) if logsumexp.dim() == 4 else logsumexp
    return _backward(grad_out, query, key, value, attn_bias, out, lse, is_causal, scale, dropout_p, philox_seed,
                     philox_offset)


def _scaled_dot_product_fused_attention_overrideable(  # unreached on the interpreter: a PrivateUse1 device's path
        query, key, value, attn_bias=None, dropout_p=0.0, is_causal=False, return_debug_mask=False, *, scale=None):
    _checked("_scaled_dot_product_fused_attention_overrideable", query, key, value, attn_bias, dropout_p)
    check_debug_mask("_scaled_dot_product_fused_attention_overrideable", return_debug_mask, dropout_p)
    m = query.shape[2]
    out, lse, seed, offset = _forward(query, key, value, attn_bias, is_causal, scale, m, dropout_p)
    return (out, lse, None, None, m, key.shape[2], seed, offset, None)


def _scaled_dot_product_fused_attention_overrideable_backward(  # unreached on the interpreter: PrivateUse1's
        grad_out, query, key, value, attn_bias, grad_input_mask, out, logsumexp, cum_seq_q, cum_seq_k, max_q, max_k,
        dropout_p, is_causal, philox_seed, philox_offset, *, scale=None):
    _checked("_scaled_dot_product_fused_attention_overrideable_backward", query, key, value, attn_bias, dropout_p)
    _no_bias_grad(grad_input_mask, attn_bias)
    return (*_backward(grad_out, query, key, value, attn_bias, out, logsumexp, is_causal, scale, dropout_p,
                       philox_seed, philox_offset), None)


IMPLS = {
    "_scaled_dot_product_efficient_attention": _scaled_dot_product_efficient_attention,
    "_scaled_dot_product_efficient_attention_backward": _scaled_dot_product_efficient_attention_backward,
    "_scaled_dot_product_cudnn_attention": _scaled_dot_product_cudnn_attention,
    "_scaled_dot_product_cudnn_attention_backward": _scaled_dot_product_cudnn_attention_backward,
    "_scaled_dot_product_fused_attention_overrideable": _scaled_dot_product_fused_attention_overrideable,
    "_scaled_dot_product_fused_attention_overrideable_backward":
        _scaled_dot_product_fused_attention_overrideable_backward,
}
