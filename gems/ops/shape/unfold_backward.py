"""unfold_backward (and .out): the gradient of ``x.unfold(dim, size, step)``: grad (input_sizes with dim replaced
by the window count, and a last dim of ``size``) summed back onto ``input_sizes``: out[.., j, ..] = sum of
grad[.., w, .., j - w * step] over the windows w that cover j.

Output-indexed (deterministic, no atomics, nothing zero-filled first): each element loops over at most
ceil(size / step) windows, summing in fp32 (fp64 for float64, int64 for integers; bool as a logical or, as
ATen's ``+=`` on bool is). The dims before dim and after it are each walked with one stride; a grad whose
layout does not allow that is first copied dense (a second launch).
"""

import math

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import pointwise_config
from gems.dtypes import ALL
from gems.ops.shape.remap import INT32_LIMIT, dense_copy, dims_of, remap
from gems.ops.shape.shared import checked_dtype, prepared_out, shape_samples, wrap_dim
from gems.runtime.launch import Launcher, cdiv
from gems.spec import OpSpec


@triton.jit
def _unfold_backward_kernel(grad_ptr, out_ptr, numel, n_dim, inner, n_windows, size, step,
                            stride_outer, stride_window, stride_inner, stride_k,
                            iters, ACC: tl.constexpr, INT64: tl.constexpr, BLOCK: tl.constexpr):
    """out (outer, n_dim, inner), dense: each element sums the grad (outer, n_windows, inner, size) elements of
    the windows covering it, the last one first."""
    pid = tl.program_id(0)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        pid = pid.to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    inside = offs < numel
    b = offs % inner
    t = offs // inner
    j = t % n_dim
    a = t // n_dim
    last = tl.minimum(j // step, n_windows - 1)
    base = grad_ptr + a * stride_outer + b * stride_inner
    acc = tl.zeros([BLOCK], ACC)
    for i in range(0, iters):
        w = last - i
        k = j - w * step
        ok = inside & (w >= 0) & (k < size)
        acc += tl.load(base + w * stride_window + k * stride_k, mask=ok, other=0).to(ACC)
    tl.store(out_ptr + offs, acc.to(out_ptr.dtype.element_ty), mask=inside)


_unfold_backward = Launcher(_unfold_backward_kernel)


def _merged_stride(sizes, strides):
    """One stride walking these dims (outer to inner) as one, or None."""
    stride = span = None
    for n, s in zip(reversed(sizes), reversed(strides)):
        if n == 1:
            continue
        if stride is not None and s != span:
            return None
        stride = s if stride is None else stride
        span = s * n
    return 0 if stride is None else stride


def _unfold_backward_into(grad, out, dim, size, step):
    if out.numel() == 0:
        return out
    if out.dim() == 0:  # x.unfold of a 0-d x is (size,) = (1,): one window
        grad, dim = grad.unsqueeze(0), 0
    shape = out.shape if out.dim() else (1,)
    inner = math.prod(shape[dim + 1:])
    n_windows = grad.shape[dim]
    strides = [_merged_stride(grad.shape[:dim], grad.stride()[:dim]),
               _merged_stride(grad.shape[dim + 1:-1], grad.stride()[dim + 1:-1])]
    if None in strides:
        grad = dense_copy(grad)
        strides = [_merged_stride(grad.shape[:dim], grad.stride()[:dim]),
                   _merged_stride(grad.shape[dim + 1:-1], grad.stride()[dim + 1:-1])]
    numel = out.numel()
    block, num_warps = pointwise_config(numel, out.element_size())
    acc = (tl.float64 if out.dtype is torch.float64 else tl.float32) if out.dtype.is_floating_point else tl.int64
    reach = sum((n - 1) * s for n, s in zip(grad.shape, grad.stride()))
    _unfold_backward((cdiv(numel, block),), grad, out, numel, shape[dim], inner, n_windows, size, step,
                     strides[0], grad.stride(dim), strides[1], grad.stride(-1), cdiv(size, step), acc,
                     max(numel, reach) > INT32_LIMIT, block, num_warps=num_warps)
    return out


def _checked(grad, input_sizes, dim, size, step):
    """ATen's checks: of its kernel's, and of x.unfold's where windows do not overlap (step >= size: ATen then
    copies grad into the unfolded view of the result)."""
    dim = wrap_dim(dim, len(input_sizes))
    if step <= 0:
        raise ValueError(f"step is {step} but must be > 0")
    n = input_sizes[dim] if input_sizes else 1
    if step >= size and size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {dim} is {n} but size is {size}")
    # ATen reads such a grad out of its bounds; gems refuses it rather than read memory it was not given.
    sizes = list(input_sizes) or [1]
    expected = sizes[:dim] + [grad.shape[dim] if grad.dim() > 1 else 1] + sizes[dim + 1:] + [size]
    if list(grad.shape) != (expected if input_sizes else [size]):
        raise RuntimeError(f"unfold_backward: grad of shape {list(grad.shape)} is not the unfolding of input_sizes "
                           f"{list(input_sizes)} along dim {dim} into windows of {size}")
    checked_dtype(grad)
    return dim


def unfold_backward(grad_in, input_sizes, dim, size, step):
    dim = _checked(grad_in, input_sizes, dim, size, step)
    out = torch.empty(input_sizes, dtype=grad_in.dtype, device=grad_in.device)
    return _unfold_backward_into(grad_in, out, dim, size, step)


def unfold_backward_out(grad_in, input_sizes, dim, size, step, *, out):
    dim = _checked(grad_in, input_sizes, dim, size, step)
    prepared_out(out, grad_in, input_sizes)
    if not out.is_contiguous():
        dense = _unfold_backward_into(grad_in, torch.empty(input_sizes, dtype=out.dtype, device=out.device), dim,
                                      size, step)
        return remap(dense, out, dims_of(dense, out))
    return _unfold_backward_into(grad_in, out, dim, size, step)


SPECS = [
    OpSpec(
        name="unfold_backward", family="tensor",
        impls={"unfold_backward": unfold_backward, "unfold_backward.out": unfold_backward_out},
        call=torch.ops.aten.unfold_backward.default, samples=shape_samples("unfold_backward_samples"), dtypes=ALL,
        tolerance="pointwise",  # pointwise: overlapping windows are summed
        fixed_numbers={"*": "input_sizes, dim, size and step say how grad_in was unfolded: ATen checks none of "
                            "them against grad_in's shape (with other ones it reads past grad_in), so they "
                            "change only with grad_in"}),
]
