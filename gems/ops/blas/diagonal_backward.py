"""diagonal_backward: the gradient of ``diagonal(input, offset, dim1, dim2)``: zeros of the input's
sizes with grad_output on that diagonal (``diagonal_backward``, ``diagonal_backward.out``). Kernel in
diagonal.py, shared with diag_embed."""

from __future__ import annotations

import torch

from gems.checks import check_out
from gems.dtypes import ALL
from gems.ops.blas.diagonal import check_dtype, diagonal_layout, embed
from gems.ops.blas.gemm import overlaps
from gems.spec import OpSpec


def _check(grad_output, input_sizes, offset, dim1, dim2):
    check_dtype("diagonal_backward", grad_output)
    sizes = [int(s) for s in input_sizes]
    order, n, _, _ = diagonal_layout(sizes, offset, dim1, dim2)
    expected = [sizes[d] for d in order[:-2]] + [n]
    if list(grad_output.shape) != expected:
        raise RuntimeError(f"diagonal_backward: grad_output of shape {list(grad_output.shape)} does not match the "
                           f"diagonal's shape {expected}")
    return sizes


def diagonal_backward(grad_output, input_sizes, offset, dim1, dim2):
    sizes = _check(grad_output, input_sizes, offset, dim1, dim2)
    return embed(grad_output, sizes, offset, dim1, dim2)


def diagonal_backward_out(grad_output, input_sizes, offset, dim1, dim2, *, out):
    sizes = _check(grad_output, input_sizes, offset, dim1, dim2)
    check_out(out, grad_output)
    if list(out.shape) != sizes:
        out.resize_(sizes)
    if overlaps(out, grad_output):
        return out.copy_(embed(grad_output, sizes, offset, dim1, dim2))
    return embed(grad_output, sizes, offset, dim1, dim2, out)


def _samples(dtype, device, quick):
    from gems.spec import Sample
    from gems.testing.samples import make_tensor

    mk = lambda *s: make_tensor(s, dtype, device)  # noqa: E731
    cases = [
        Sample("contiguous", lambda: (mk(5), [5, 7], 0, 0, 1)),
        Sample("offset-positive", lambda: (mk(4), [5, 7], 3, 0, 1)),
        Sample("offset-negative", lambda: (mk(3), [5, 7], -2, 0, 1)),
        Sample("batched-dims", lambda: (mk(2, 4, 3), [3, 2, 5, 4], 1, 2, 0)),
        Sample("noncontiguous-transposed", lambda: (mk(5, 3).t(), [3, 6, 5], 0, -1, 1)),
        Sample("empty-diagonal", lambda: (mk(0), [2, 3], 5, 0, 1)),
        Sample("out", lambda: (mk(5), [5, 7], 0, 0, 1),
               call=lambda g, *a: torch.ops.aten.diagonal_backward.out(g, *a, out=g.new_empty(0)),
               expects="diagonal_backward.out"),
    ]
    if dtype.is_floating_point:
        cases.append(Sample("diagonal-grad", lambda: (mk(3, 5, 4).requires_grad_(),), grad=True,
                            call=lambda x: torch.diagonal(x, 1, 0, 2) * 1, expects="diagonal_backward"))
    return cases


SPECS = [
    OpSpec(name="diagonal_backward", family="blas",
           impls={"diagonal_backward": diagonal_backward, "diagonal_backward.out": diagonal_backward_out},
           call=torch.ops.aten.diagonal_backward, samples=_samples, dtypes=ALL, tolerance="exact"),
]
