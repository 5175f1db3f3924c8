"""What index.Tensor and index_put share: ATen's advanced indexing, planned as one walk.py launch.

``self[indices]`` with a list of optional index tensors, one per leading dim of self: a bool (or
uint8) mask stands for as many dims as it has and becomes their long indices (gems' nonzero, which
reads the count to the host, as ATen does); the index tensors broadcast together to a shape B. The
indexed result is self's dims before the indexed ones, then B, then the dims after them; when the
indexed dims are not adjacent (a None between them) B comes first. Each element of the result reads
``self[base + sum_k wrap(i_k[b]) * stride_k]``, negative indices counting from the end.
"""

from __future__ import annotations

import torch

from gems.ops.compaction.nonzero import nonzero
from gems.ops.copy.shared import copy_view
from gems.ops.indexing.shared import broadcast_shape, check_device, check_values, out_of_bounds
from gems.ops.indexing.walk import MAX_INDICES, Indices
from gems.runtime.registration import Fallback

_INDEX_DTYPES = (torch.int64, torch.int32, torch.bool, torch.uint8)


class Advanced:
    """The plan of ``self[indices]``: ``shape`` (the indexed result's), and ``layout(t)``: t's (a tensor of
    self's shape) strides over that shape, 0 along B, with the :class:`Indices` into t."""

    __slots__ = ("shape", "order", "b_shape", "tensors", "index_strides", "dims")

    def __init__(self, shape, order, b_shape, tensors, index_strides, dims):
        self.shape, self.order, self.b_shape = shape, order, b_shape
        self.tensors, self.index_strides, self.dims = tensors, index_strides, dims

    def leading_rows(self) -> bool:
        """Whether one index tensor addresses dim 0 and the indexed shape is B followed by self's other dims."""
        return self.dims == [0] and self.order[0] is None

    def layout(self, t):
        strides = []
        for d in self.order:
            strides += [0] * len(self.b_shape) if d is None else [t.stride(d)]
        return strides, Indices(self.tensors, self.index_strides, [(t.shape[d], t.stride(d)) for d in self.dims],
                                wrap=True)


def _expanded(self, indices):
    """[(dim of self, long/int index tensor, whether its values need a check)]: masks replaced by the
    indices of their true elements (in range by construction)."""
    if not indices:
        raise IndexError("at least one index must be provided")
    dims, d = [], 0
    for t in indices:
        if t is None:
            d += 1
            continue
        if t.dtype not in _INDEX_DTYPES:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        check_device(self, t)
        if t.dtype in (torch.bool, torch.uint8):
            if t.dim() == 0:
                raise Fallback("a 0-d mask index is left to ATen")
            for j, n in enumerate(t.shape):
                if d + j >= self.dim() or self.shape[d + j] != n:
                    raise IndexError(f"The shape of the mask {list(t.shape)} at index {j} does not match the shape of "
                                     f"the indexed tensor {list(self.shape)} at index {d + j}")
            found = nonzero(t if t.dtype is torch.bool else t.view(torch.bool))
            dims += [(d + j, found[:, j], False) for j in range(t.dim())]
            d += t.dim()
        else:
            dims.append((d, t, True))
            d += 1
    if d > self.dim():
        raise IndexError(f"too many indices for tensor of dimension {self.dim()} (got {d})")
    if not dims:
        raise Fallback("no index tensor")
    if len(dims) > MAX_INDICES:
        raise Fallback(f"more than {MAX_INDICES} index tensors")
    return dims


def plan(self: torch.Tensor, indices) -> Advanced:
    """ATen's checks of ``self[indices]`` (index values included) and its plan."""
    dims = _expanded(self, indices)
    b_shape = broadcast_shape(*(t.shape for _, t, _ in dims))
    if b_shape is None:
        shapes = ", ".join(str(list(t.shape)) for _, t, _ in dims)
        raise IndexError(f"shape mismatch: indexing tensors could not be broadcast together with shapes {shapes}")
    tensors = [t if tuple(t.shape) == b_shape else t.expand(b_shape) for _, t, _ in dims]
    if any(t.stride() != tensors[0].stride() for t in tensors):
        # One set of strides for all: small copies of the indices, by gems' copy (Tensor.contiguous would copy with
        # ATen's kernel inside the call, which the native layer cannot replay: broadcast indices such as a mask's
        # padding_mask[batch_idx, kv_idx] would take the Python path every call).
        tensors = [t if t.is_contiguous() else copy_view(t) for t in tensors]
    positions = [d for d, _, _ in dims]
    numel = 1
    for n in b_shape:
        numel *= n
    for d, t, given in dims:
        if numel and self.shape[d] == 0:
            raise IndexError("index is out of bounds for dimension with size 0")
        if given:
            check_values(t, self.shape[d], out_of_bounds(d, self.shape[d], IndexError), wrap=True)
    rest = [d for d in range(self.dim()) if d not in positions]
    if positions == list(range(positions[0], positions[-1] + 1)):
        order = [d for d in rest if d < positions[0]] + [None] + [d for d in rest if d > positions[-1]]
    else:
        order = [None] + rest
    shape, index_strides = [], []
    for d in order:
        shape += list(b_shape) if d is None else [self.shape[d]]
        index_strides += list(tensors[0].stride()) if d is None else [0]
    return Advanced(tuple(shape), order, b_shape, tensors, index_strides, positions)

