"""What the shape family's operators share: ATen's checks of written tensors, and the references to the
family's sample and perf generators (gems/testing/samples_shape.py, imported on first use)."""

import torch

from gems.checks import check_out
from gems.codegen.pointwise import SUPPORTED_DTYPES
from gems.codegen.pointwise_checks import is_dense
from gems.ops.reduction.planning import wrap_dim
from gems.runtime.registration import Fallback
from gems.spec import lazy, lazy_perf

__all__ = ["check_no_overlap", "checked_dtype", "empty_suggested", "prepared_out", "shape_perf", "shape_samples",
           "suggest_memory_format", "wrap_dim"]

_CLONE_HINT = "Please clone() the tensor before performing the operation."


def checked_dtype(*tensors) -> None:
    """Fallback for dtypes the copy kernels do not move (complex, the unsigned 16-64 bit types)."""
    for t in tensors:
        if t.dtype not in SUPPORTED_DTYPES:
            raise Fallback(f"dtype {t.dtype} not handled by gems copy kernels")


def check_no_overlap(out: torch.Tensor, inputs) -> None:
    """ATen's assert_no_internal_overlap(out) and assert_no_overlap(out, input) for each input: a written
    tensor may share no memory with an input (not even all of it); only dense layouts are judged."""
    if not is_dense(out):
        if any(st == 0 and n > 1 for st, n in zip(out.stride(), out.shape)):
            raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to "
                               f"a single memory location. {_CLONE_HINT}")
        return
    if out.numel() == 0:
        return
    begin = out.data_ptr()
    end = begin + out.numel() * out.element_size()
    for t in inputs:
        if t.numel() == 0 or not is_dense(t):
            continue
        start = t.data_ptr()
        if start < end and begin < start + t.numel() * t.element_size():
            raise RuntimeError("unsupported operation: some elements of the input tensor and the written-to tensor "
                               f"refer to a single memory location. {_CLONE_HINT}")


def prepared_out(out: torch.Tensor, like: torch.Tensor, shape, *inputs) -> torch.Tensor:
    """An ``out=`` of ATen's composite out= wrappers (flip.out, constant_pad_nd.out...): on like's device and
    of exactly its dtype, resized to ``shape``. One that shares memory with like or ``inputs`` would be read
    while written: ATen's wrapper (the functional result, then a copy) serves it."""
    check_out(out, like)
    if list(out.shape) != list(shape):
        out.resize_(shape)
    storage = out.untyped_storage().data_ptr()
    if any(t.untyped_storage().data_ptr() == storage for t in (like, *inputs)):
        raise Fallback("out= shares memory with an input")
    return out


_CHANNELS_LAST = {4: (torch.channels_last, (1, 3, 2, 0)), 5: (torch.channels_last_3d, (1, 4, 3, 2, 0))}


def suggest_memory_format(t: torch.Tensor) -> torch.memory_format:
    """ATen's suggest_memory_format: channels-last (3d) when a 4-d (5-d) tensor's strides grow from the channel
    dim outwards (is_channels_last_strides_2d/3d), ambiguous cases (a trivial channel dim) left contiguous."""
    layout = _CHANNELS_LAST.get(t.dim())
    if layout is None:
        return torch.contiguous_format
    shape, strides = t.shape, t.stride()
    if strides[1] == 0:
        return torch.contiguous_format
    low = 0
    for d in layout[1]:
        if shape[d] == 0 or strides[d] < low or (d == 0 and low == strides[1]):
            return torch.contiguous_format
        low = strides[d] * (shape[d] if shape[d] > 1 else 1)
    return layout[0]


def empty_suggested(like: torch.Tensor, shape, dtype=None) -> torch.Tensor:
    """A result of ``shape`` in ``like``'s suggested memory format (paddings, roll, pixel_shuffle)."""
    return torch.empty(shape, dtype=like.dtype if dtype is None else dtype, device=like.device,
                       memory_format=suggest_memory_format(like))


def shape_samples(name: str):
    """The generator gems.testing.samples_shape.<name>, imported on first use."""
    return lazy("gems.testing.samples_shape", "generator", name)


def shape_perf(kind: str, shapes: str = "shape"):
    """The perf inputs of gems.testing.samples_shape.shape_perf(kind) on the perf/shapes.yaml key ``shapes``
    ("shape": [rows, cols]; "shape_image": [N, C, H, W])."""
    return lazy_perf("gems.testing.samples_shape", "shape_perf", kind, shapes=shapes)
