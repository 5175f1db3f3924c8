"""embedding_dense_backward: ``embedding_dense_backward`` and its ``.out`` form, the gradient of
embedding's weight: grad_weight[w] = sum of grad_output's rows whose index is w (over all of indices'
positions), none for w == padding_idx, divided by w's count with scale_grad_by_freq. Indices outside
[0, num_weights) add nothing (as ATen's CPU kernel).

segments.py's sorted sums: deterministic, accumulated in fp32 (fp64 for fp64), and each row of the
result written exactly once, zeros included. ATen's CUDA kernel zero-fills the (num_weights, D) result,
sorts, and sums segments through a buffer of partial sums; here the zeros come with the one write of
the result, there is no partial-sum buffer, and the sum order (ascending token) does not depend on the run.
"""

from __future__ import annotations

import torch
import triton.language as tl  # noqa: F401  (kernel modules import it: the interpreter needs it)

from gems.dtypes import FLOATS
from gems.ops.copy.shared import copy_view
from gems.ops.indexing.segments import sum_rows
from gems.ops.indexing.shared import prepare_out
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, lazy_perf

# --------------------------------------------------------------------------- ATen overloads


def _backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq, out=None):
    if indices.dtype not in (torch.int64, torch.int32):
        raise RuntimeError("Expected tensor for argument #2 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {indices.type()} instead (while checking arguments for "
                           "embedding_backward)")
    if grad_output.dtype not in FLOATS:
        raise Fallback(f"embedding_dense_backward of {grad_output.dtype} is left to ATen")
    n = indices.numel()
    width = grad_output.shape[-1] if grad_output.dim() else 1
    grad = _reshaped(grad_output, (n, width))
    shape = (num_weights, width)
    out = torch.empty(shape, dtype=grad.dtype, device=grad.device) if out is None else prepare_out(out, grad, shape)
    return sum_rows(out, _reshaped(indices, (n,)), grad, skip_row=padding_idx, scale=bool(scale_grad_by_freq))


def _reshaped(t, shape):
    """``t.reshape(shape)``, copied by gems' kernel where no view is possible (BERT's token type ids, expanded from
    a buffer with strides (0, 1)): Tensor.reshape would copy with ATen's kernel inside the call, which the native
    layer cannot replay."""
    try:
        return t.view(shape)
    except RuntimeError:
        return copy_view(t).view(shape)


def embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq):
    return _backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq)


def embedding_dense_backward_out(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq, *, out):
    return _backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq, out)


# --------------------------------------------------------------------------- samples


def _samples(dtype, device, quick):
    from gems.testing.samples_indexing import embedding_backward_samples

    return embedding_backward_samples(dtype, device, quick)


SPECS = [
    OpSpec(
        name="embedding_dense_backward", family="indexing",
        impls={"embedding_dense_backward": embedding_dense_backward,
               "embedding_dense_backward.out": embedding_dense_backward_out},
        call=torch.ops.aten.embedding_dense_backward, samples=_samples, dtypes=FLOATS,
        perf=lazy_perf("gems.testing.samples_indexing", "rows_perf", "embedding_dense_backward", shapes="index_rows"),
    ),
]
