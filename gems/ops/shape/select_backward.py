"""select_backward (and .out): the gradient of ``x.select(dim, index)``: zeros of ``input_sizes`` with grad
written at ``index`` along dim (grad may broadcast, as ATen's copy_ lets it). One launch of the family's copy
kernel (PAD mode along dim, from a source one element wide: every other element takes 0)."""

import torch

from gems.checks import checked_scalar
from gems.dtypes import ALL
from gems.ops.shape.remap import PAD, dims_of, remap
from gems.ops.shape.shared import checked_dtype, prepared_out, shape_samples, wrap_dim
from gems.spec import OpSpec


def _plan(grad, input_sizes, dim, index):
    dim = wrap_dim(dim, len(input_sizes))
    size = input_sizes[dim]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input_sizes)} at dimension "
                         f"{dim}")
    sliced = list(input_sizes)
    sliced[dim] = 1
    checked_dtype(grad)
    return grad.unsqueeze(dim).expand(sliced), {dim: (PAD, index % size)}


def select_backward(grad_output, input_sizes, dim, index):
    src, modes = _plan(grad_output, input_sizes, dim, index)
    out = torch.empty(input_sizes, dtype=grad_output.dtype, device=grad_output.device)
    return remap(src, out, dims_of(src, out, modes), checked_scalar(0, out.dtype))


def select_backward_out(grad_output, input_sizes, dim, index, *, out):
    src, modes = _plan(grad_output, input_sizes, dim, index)
    prepared_out(out, grad_output, input_sizes)
    return remap(src, out, dims_of(src, out, modes), checked_scalar(0, out.dtype))


SPECS = [
    OpSpec(
        name="select_backward", family="tensor",
        impls={"select_backward": select_backward, "select_backward.out": select_backward_out},
        call=torch.ops.aten.select_backward.default, samples=shape_samples("select_backward_samples"), dtypes=ALL,
        tolerance="exact"),
]
