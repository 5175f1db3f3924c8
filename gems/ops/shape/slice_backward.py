"""slice_backward (and .out): the gradient of ``x[..., start:end:step, ...]``: zeros of ``input_sizes`` with
grad written into the slice (grad may broadcast to it, as ATen's copy_ lets it). One launch of the family's copy
kernel: STEP mode along dim (PAD when step is 1), every other element the fill value 0, so the result is never
filled and then copied into.
"""

import torch

from gems.checks import checked_scalar
from gems.dtypes import ALL
from gems.ops.shape.remap import PAD, STEP, dims_of, remap
from gems.ops.shape.shared import checked_dtype, prepared_out, shape_perf, shape_samples, wrap_dim
from gems.spec import OpSpec


def _slice_span(size, start, end, step):
    """ATen's slice: (start, length) of x[start:end:step] along a dim of ``size``."""
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    start = 0 if start is None else start
    end = size if end is None else end
    start = start + size if start < 0 else start
    end = end + size if end < 0 else end
    start = min(max(start, 0), size)
    end = min(max(end, start), size)
    return start, -(-(end - start) // step)


def _plan(grad, input_sizes, dim, start, end, step):
    """(grad viewed with the slice's shape, dim -> mode) for the output."""
    dim = wrap_dim(dim, len(input_sizes))
    begin, length = _slice_span(input_sizes[dim], start, end, step)
    sliced = list(input_sizes)
    sliced[dim] = length
    checked_dtype(grad)
    return grad.expand(sliced), {dim: (STEP, begin) if step > 1 else (PAD, begin)}


def slice_backward(grad_output, input_sizes, dim, start, end, step):
    src, modes = _plan(grad_output, input_sizes, dim, start, end, step)
    out = torch.empty(input_sizes, dtype=grad_output.dtype, device=grad_output.device)
    return remap(src, out, dims_of(src, out, modes), checked_scalar(0, out.dtype), step)


def slice_backward_out(grad_output, input_sizes, dim, start, end, step, *, out):
    src, modes = _plan(grad_output, input_sizes, dim, start, end, step)
    prepared_out(out, grad_output, input_sizes)
    return remap(src, out, dims_of(src, out, modes), checked_scalar(0, out.dtype), step)


SPECS = [
    OpSpec(
        name="slice_backward", family="tensor",
        impls={"slice_backward": slice_backward, "slice_backward.out": slice_backward_out},
        call=torch.ops.aten.slice_backward.default, samples=shape_samples("slice_backward_samples"), dtypes=ALL,
        tolerance="exact", perf=shape_perf("slice-backward")),
]
