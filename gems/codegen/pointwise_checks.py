"""What the pointwise generator (gems/codegen/pointwise.py) decides before a launch, as ATen does: the common
dtype of tensor and number operands (ATen's result-type rules), the device, the broadcast shape, checks of an
``out=`` tensor and of overlap between outputs and inputs, and the dimension order and merging by which a
strided view is walked in memory order (and whether 32-bit offsets reach every element)."""

from __future__ import annotations

import struct

import torch


def result_type(values) -> torch.dtype:
    if len(values) == 2 and any(isinstance(v, torch.Tensor) for v in values):
        return torch.result_type(values[0], values[1])
    # ATen's ResultTypeState: dimensioned tensors, 0-d tensors and wrapped numbers are promoted
    # within their class, then a lower class counts only where it is of a higher category.
    dim = zero = wrapped = None
    for v in values:
        if isinstance(v, torch.Tensor):
            if v.dim() > 0:
                dim = v.dtype if dim is None else torch.promote_types(dim, v.dtype)
            else:
                zero = v.dtype if zero is None else torch.promote_types(zero, v.dtype)
        else:
            dtype = number_dtype(v)
            wrapped = dtype if wrapped is None else torch.promote_types(wrapped, dtype)
    return combine_categories(dim, combine_categories(zero, wrapped))


def number_dtype(value) -> torch.dtype:
    if isinstance(value, bool):
        return torch.bool
    if isinstance(value, int):
        return torch.int64
    if isinstance(value, complex):
        return torch.complex64 if torch.get_default_dtype() is torch.float32 else torch.complex128
    return torch.get_default_dtype()


def combine_categories(higher, lower):
    """ATen's combine_categories: a lower class raises the result only to a higher category."""
    if higher is None or lower is None:
        return lower if higher is None else higher
    if higher.is_complex:
        return higher
    if lower.is_complex:
        return torch.promote_types(higher, lower)
    if higher.is_floating_point:
        return higher
    if higher is torch.bool or lower.is_floating_point:
        return torch.promote_types(higher, lower)
    return higher


def float64_bits(value: float) -> int:
    """A float's IEEE double bit pattern as a signed 64-bit integer (see the module docstring)."""
    return struct.unpack("<q", struct.pack("<d", value))[0]


def pick_device(tensors, out):
    for t in tensors:
        if t.dim() > 0 or not t.is_cpu:
            return t.device
    if tensors:
        return tensors[0].device
    return (out[0] if isinstance(out, (tuple, list)) else out).device


def broadcast_shape(operands) -> torch.Size:
    shapes = [t.shape for t in operands if isinstance(t, torch.Tensor)]
    if len(shapes) == 1 or all(s == shapes[0] for s in shapes[1:]):
        return shapes[0]
    return torch.broadcast_shapes(*shapes)


def check_out(out, dtype, shape, device, inplace=False):
    """ATen's rules for an ``out=`` tensor: same device, castable dtype, resized to the result shape
    (an in-place result cannot be resized)."""
    if out.device != device:  # unreached on the interpreter: one device
        raise RuntimeError(f"Expected out tensor to have device {device}, but got {out.device} instead")
    if not torch.can_cast(dtype, out.dtype):
        raise RuntimeError(f"result type {type_name(dtype)} can't be cast to the desired output type "
                           f"{type_name(out.dtype)}")
    if out.shape != shape:
        if inplace:
            raise RuntimeError(f"output with shape {list(out.shape)} doesn't match the broadcast shape "
                               f"{list(shape)}")
        out.resize_(shape)


_OVERLAP_HINT = "Please clone() the tensor before performing the operation."


def is_dense(t) -> bool:
    """ATen's is_non_overlapping_and_dense: the elements fill a block of memory exactly, in some
    order of the dimensions (size-1 dimensions aside)."""
    if t.is_contiguous():
        return True
    expected = 1
    for stride, size in sorted((st, n) for st, n in zip(t.stride(), t.shape) if n != 1):
        if stride != expected:
            return False
        expected *= size
    return True


def check_overlap(out, inputs):
    """ATen's memory-overlap checks for a written tensor: no two of its elements may share memory,
    and an input may share its memory only exactly (same start and strides), not partly. Like ATen,
    only tensors that are non-overlapping and dense are compared; other layouts are not judged."""
    if not is_dense(out):
        if any(st == 0 and n > 1 for st, n in zip(out.stride(), out.shape)):
            raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to "
                               f"a single memory location. {_OVERLAP_HINT}")
        return
    begin = out.data_ptr()
    end = begin + out.numel() * out.element_size()
    for t in inputs:
        if t is out or begin == end:
            continue
        start = t.data_ptr()
        if start >= end or start + t.numel() * t.element_size() <= begin or not is_dense(t):
            continue
        if not (start == begin and t.numel() * t.element_size() == end - begin and t.stride() == out.stride()):
            raise RuntimeError("unsupported operation: some elements of the input tensor and the written-to tensor "
                               f"refer to a single memory location. {_OVERLAP_HINT}")


_TYPE_NAMES = {torch.float16: "Half", torch.bfloat16: "BFloat16", torch.float32: "Float",
               torch.float64: "Double", torch.int8: "Char", torch.int16: "Short", torch.int32: "Int",
               torch.int64: "Long", torch.uint8: "Byte", torch.bool: "Bool"}


def type_name(dtype):
    return _TYPE_NAMES.get(dtype, str(dtype))


def merged_layout(shape, tensors):
    """Sizes and per-tensor strides after dropping size-1 dims, ordering by the last tensor's
    strides (an output) and merging dims that are contiguous in every tensor."""
    ndim = len(shape)
    strides = [broadcast_strides(t, shape) for t in tensors]
    dims = [d for d in range(ndim) if shape[d] != 1]
    order_key = strides[-1]
    dims.sort(key=lambda d: -order_key[d])
    sizes, merged = [], [[] for _ in tensors]
    for d in dims:
        if sizes and all(ms[-1] == s[d] * shape[d] for ms, s in zip(merged, strides)):
            sizes[-1] *= shape[d]
            for ms, s in zip(merged, strides):
                ms[-1] = s[d]
            continue
        sizes.append(shape[d])
        for ms, s in zip(merged, strides):
            ms.append(s[d])
    if not sizes:
        return (1,), [(0,) for _ in tensors]
    return tuple(sizes), [tuple(ms) for ms in merged]


def broadcast_strides(t, shape):
    pad = len(shape) - t.dim()
    strides = [0] * pad + list(t.stride())
    return [0 if i >= pad and t.shape[i - pad] == 1 and shape[i] != 1 else s for i, s in enumerate(strides)]


def max_offset(sizes, strides, tensors):
    return max(sum((n - 1) * abs(s) for n, s in zip(sizes, layout)) for layout in strides)
