"""The flash-attention overloads that ``scaled_dot_product_attention`` reaches, forward and backward:

- ``_scaled_dot_product_flash_attention`` (CUDA's flash path: fp16/bf16, no mask) and its ``_backward``;
- ``_scaled_dot_product_flash_attention_for_cpu`` (CPU tensors, the interpreter vendor: any float dtype,
  an additive mask of the query's dtype) and its ``_backward``.

The CUDA pair draws gems' own dropout mask for dropout_p > 0 (gems/ops/attention/dropout.py; the key in
rng_state, the philox_seed output); the CPU pair refuses dropout, as ATen's CPU kernel does.

Both return the natural-log logsumexp (batch, heads, M) in fp32, as ATen's kernels do; the CPU one lays
it out (batch, M, heads) in memory as ATen does. Kernels: gems/ops/attention/flash.py and flash_backward.py. The
declaration is ``scaled_dot_product_attention``'s (gems/ops/attention/scaled_dot_product_attention.py).
"""

from __future__ import annotations

import torch

from gems.ops.attention.checks import check_debug_mask, check_inputs
from gems.ops.attention.decode import attention_forward
from gems.ops.attention.flash_backward import attention_backward
from gems.ops.random.philox import philox_key


def _outputs(q, v):
    """out (batch, heads, M, Dv) in the query's layout, as ATen's CUDA flash kernel and its meta function lay it
    out."""
    b, h, m, _ = q.shape
    return in_layout_of(q, (b, h, m, v.shape[3]))


def empty_in_order(shape, order, like):
    """An empty tensor of ``shape`` whose dims lie in memory in ``order`` (outermost first): an allocation and a
    view, which the native layer's plans replay (torch.empty_permuted is not among their operations)."""
    physical = torch.empty([shape[d] for d in order], dtype=like.dtype, device=like.device)
    return physical.permute([order.index(d) for d in range(len(order))])


def in_layout_of(query, shape):
    """An empty tensor of ``shape`` whose dims are ordered in memory as query's are: ATen's CPU flash kernel (and
    its meta function, which torch.compile's graphs rely on) returns the output in the query's layout."""
    return empty_in_order(shape, sorted(range(4), key=lambda d: -query.stride(d)), query)


def _grads(q, k, v):
    return torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)


def _scaled_dot_product_flash_attention(query, key, value, dropout_p=0.0, is_causal=False, return_debug_mask=False,
                                        *, scale=None):
    name = "_scaled_dot_product_flash_attention"
    check_inputs(name, query, key, value, dropout_p=dropout_p, gqa=True, dropout=True)
    if query.dtype not in (torch.float16, torch.bfloat16):
        raise RuntimeError(f"{name}: FlashAttention only supports fp16 and bf16, got {query.dtype}")
    check_debug_mask(name, return_debug_mask, dropout_p)
    b, h, m, _ = query.shape
    out = _outputs(query, value)
    lse = torch.empty((b, h, m), dtype=torch.float32, device=query.device)
    # rng_state (2,) uint64 as ATen's: gems' dropout key (seed, offset) in it
    seed = torch.empty(2, dtype=torch.uint64, device=query.device)
    offset = torch.empty((), dtype=torch.uint64, device=query.device)
    attention_forward(query, key, value, None, is_causal, scale, out, lse, dropout=rng_dropout(query, dropout_p, seed))
    debug = torch.empty(0, dtype=query.dtype, device=query.device)
    return out, lse, None, None, m, key.shape[2], seed, offset, debug


def _scaled_dot_product_flash_attention_backward(grad_out, query, key, value, out, logsumexp, cum_seq_q, cum_seq_k,
                                                 max_q, max_k, dropout_p, is_causal, philox_seed, philox_offset,
                                                 *, scale=None):
    check_inputs("_scaled_dot_product_flash_attention_backward", query, key, value, dropout_p=dropout_p, gqa=True,
                 dropout=True)
    dq, dk, dv = _grads(query, key, value)
    attention_backward(grad_out, query, key, value, out, logsumexp, None, is_causal, scale, dq, dk, dv,
                       dropout=rng_saved(dropout_p, philox_seed))
    return dq, dk, dv


def rng_dropout(query, dropout_p, rng_state):
    """The forward's ``dropout`` argument for FlashAttention's rng_state (2,) uint64: a fresh key, written to
    rng_state[0] (seed) and rng_state[1] (offset) by the kernel; None without dropout."""
    if not dropout_p > 0.0:
        return None
    words = rng_state.view(torch.int64)
    return (dropout_p, philox_key(query.device, None), words[0], words[1])


def rng_saved(dropout_p, rng_state):
    """The backward's ``dropout`` argument from the rng_state a dropout forward filled; None without dropout."""
    if not dropout_p > 0.0:
        return None
    words = rng_state.view(torch.int64)
    return (dropout_p, words[0], words[1])


def _cpu_mask(name, query, attn_mask):
    # ATen's CPU kernel takes a float32 mask with any query dtype (torch 2.13), else the query's dtype only
    if attn_mask is not None and attn_mask.dtype not in (query.dtype, torch.float32):
        raise RuntimeError(f"{name}: Attention mask is the same data type as query (got {attn_mask.dtype} and "
                           f"{query.dtype})")
    return attn_mask


def _scaled_dot_product_flash_attention_for_cpu(query, key, value, dropout_p=0.0, is_causal=False, *, attn_mask=None,
                                                scale=None):
    name = "_scaled_dot_product_flash_attention_for_cpu"
    check_inputs(name, query, key, value, attn_mask, dropout_p, gqa=True)
    attn_mask = _cpu_mask(name, query, attn_mask)
    b, h, m, _ = query.shape
    out = in_layout_of(query, (b, h, m, value.shape[3]))
    lse = torch.empty((b, m, h), dtype=torch.float32, device=query.device).transpose(1, 2)
    attention_forward(query, key, value, attn_mask, is_causal, scale, out, lse, empty_lse=0.0)
    return out, lse


def _scaled_dot_product_flash_attention_for_cpu_backward(grad_out, query, key, value, out, logsumexp, dropout_p,
                                                         is_causal, *, attn_mask=None, scale=None):
    name = "_scaled_dot_product_flash_attention_for_cpu_backward"
    check_inputs(name, query, key, value, attn_mask, dropout_p, gqa=True)
    attn_mask = _cpu_mask(name, query, attn_mask)
    # laid out (batch, M, heads, D) in memory, whatever the inputs' layout, as ATen's CPU kernel (and its meta
    # function, which torch.compile's graphs rely on) lays them out
    dq, dk, dv = (empty_in_order(t.shape, (0, 2, 1, 3), t) for t in (query, key, value))
    attention_backward(grad_out, query, key, value, out, logsumexp, attn_mask, is_causal, scale, dq, dk, dv)
    return dq, dk, dv


IMPLS = {
    "_scaled_dot_product_flash_attention": _scaled_dot_product_flash_attention,
    "_scaled_dot_product_flash_attention_backward": _scaled_dot_product_flash_attention_backward,
    "_scaled_dot_product_flash_attention_for_cpu": _scaled_dot_product_flash_attention_for_cpu,
    "_scaled_dot_product_flash_attention_for_cpu_backward": _scaled_dot_product_flash_attention_for_cpu_backward,
}
