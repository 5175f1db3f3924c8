"""ATen's argument checks of the attention overloads (gems/ops/attention), and what gems leaves to ATen."""

from __future__ import annotations

from gems.ops.attention.dropout import check_dropout
from gems.ops.attention.flash import ATTENTION_DTYPES
from gems.runtime.registration import Fallback


def check_inputs(name, q, k, v, bias=None, dropout_p=0.0, gqa=False, dropout=False):
    """ATen's checks of 4-D (batch, heads, seq, dim) q, k, v (RuntimeError), then what gems leaves to ATen
    (Fallback), before any work. ``dropout``: the caller draws gems' own dropout mask (dropout.py) when
    dropout_p > 0; a forward and its backward make the same decisions from the same inputs, so that an
    ATen-dropped forward never meets a gems backward."""
    if not (q.dim() == k.dim() == v.dim() == 4):
        raise RuntimeError(f"{name}: expected query, key and value to be 4-D, got {q.dim()}-D, {k.dim()}-D and "
                           f"{v.dim()}-D")
    if not (q.dtype == k.dtype == v.dtype):
        raise RuntimeError(f"{name}: expected query, key, and value to have the same dtype, got {q.dtype}, "
                           f"{k.dtype} and {v.dtype}")
    if not (q.device == k.device == v.device):
        raise RuntimeError(f"{name}: expected query, key, and value on the same device")
    if q.shape[0] != k.shape[0] or k.shape[0] != v.shape[0]:
        raise RuntimeError(f"{name}: batch sizes of query, key and value differ: {q.shape[0]}, {k.shape[0]}, "
                           f"{v.shape[0]}")
    if q.shape[3] != k.shape[3]:
        raise RuntimeError(f"{name}: query and key head dims differ: {q.shape[3]} and {k.shape[3]}")
    if k.shape[1] != v.shape[1] or k.shape[2] != v.shape[2]:
        raise RuntimeError(f"{name}: key and value must have the same heads and sequence length")
    if k.shape[1] != q.shape[1] and (not gqa or k.shape[1] == 0 or q.shape[1] % k.shape[1]):
        raise RuntimeError(f"{name}: query has {q.shape[1]} heads and key {k.shape[1]}")
    if dropout_p > 0.0 and not dropout:
        raise Fallback("dropout_p > 0 on an overload whose gems implementation draws no dropout mask")
    if q.dtype not in ATTENTION_DTYPES:
        raise Fallback(f"attention of {q.dtype} is not handled by gems")
    if bias is not None and (bias.dtype not in ATTENTION_DTYPES or bias.dim() > 4):
        raise Fallback(f"attention bias of {bias.dtype} with {bias.dim()} dims is left to ATen")
    if dropout_p > 0.0:
        check_dropout(name, q, k, v, dropout_p)


def check_debug_mask(name, return_debug_mask, dropout_p) -> None:
    """The debug attention mask is ATen's own: without dropout its call is left to ATen. With dropout it is
    refused: the backward cannot tell an ATen-dropped forward's key from gems', so an ATen forward here would
    meet gems' backward (another mask) and give wrong gradients."""
    if not return_debug_mask:
        return
    if dropout_p > 0.0:
        raise RuntimeError(f"{name}: return_debug_mask=True with dropout_p > 0 is not served under gems: gems draws "
                           f"its own dropout mask, which ATen's debug mask and ATen's backward do not know; run this "
                           f"call with the overload excluded (gems.use_gems(exclude=[...])) or with dropout_p = 0")
    raise Fallback("return_debug_mask: the debug attention mask is ATen's own")
