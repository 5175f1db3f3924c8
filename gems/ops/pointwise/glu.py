"""glu(dim=-1): a * sigmoid(b), a and b the two halves of x along ``dim`` (ATen's CUDA formula: libdevice's
exp, a correctly rounded division). The halves are views, so the one launch reads x in place whatever its
layout. ATen's checks: no 0-d input, an even size along dim, dim in range. Floating dtypes only. Its
backward is glu_backward.
"""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS
from gems.ops.pointwise.shared import div_rn, pointwise_perf
from gems.spec import OpSpec


@triton.jit
def sigmoid(x):
    return div_rn(1.0, 1.0 + libdevice.exp(x * -1.0))


@triton.jit
def _glu(a, b):
    return a * sigmoid(b)


glu_op = PointwiseOp("glu", _glu, operands=2, dtypes=FLOATS)


def halves(self, dim):
    """(first half, second half, wrapped dim) of self along dim, with ATen's checks."""
    if self.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    rank = self.dim()
    if not -rank <= dim < rank:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-rank}, {rank - 1}], but got {dim})")
    dim = dim % rank
    size = self.shape[dim]
    if size % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim} is size {size}")
    half = size // 2
    return self.narrow(dim, 0, half), self.narrow(dim, half, half), dim


def glu(self, dim=-1):
    first, second, _ = halves(self, dim)
    return glu_op(first, second)


def glu_out(self, dim=-1, *, out):
    first, second, _ = halves(self, dim)
    return glu_op(first, second, out=out)


# --------------------------------------------------------------------------- samples


def glu_cases(dtype, device, quick, call, expects, grad_shape=False):
    """The shared glu / glu_backward cases: ``call(x, dim)``, or ``call(grad, x, dim)`` with grad_shape."""
    from gems.spec import Sample
    from gems.testing.samples import REJECT_HOST_DTYPE, make_tensor, special_values

    def args(shape, dim, make=None, requires_grad=False):
        def build():
            x = make() if make else make_tensor(shape, dtype, device)
            if requires_grad:
                x.requires_grad_()
            if not grad_shape:
                return x, dim
            half = list(x.shape)
            if -x.dim() <= dim < x.dim():  # the error variants' grad keeps x's shape
                half[dim] //= 2
            return make_tensor(half, dtype, device), x, dim
        return build

    cases = [
        Sample("contiguous", args((13, 18), -1)),
        Sample("dim0", args((14, 17), 0)),
        Sample("3d-middle", args((3, 8, 5), 1)),
        Sample("noncontiguous-transposed", args(None, 1, lambda: make_tensor((18, 13), dtype, device).t())),
        Sample("noncontiguous-strided", args(None, -1, lambda: make_tensor((13, 36), dtype, device)[:, ::2])),
        Sample("1d", args((34,), 0)),
        Sample("empty", args((0, 6), 1)),
        Sample("special-values", args(None, 0, lambda: special_values(dtype, device).reshape(2, 8).t())),
    ]
    if dtype == REJECT_HOST_DTYPE:
        cases += [Sample("error-odd", args((4, 5), 1)), Sample("error-0d", args((), 0)),
                  Sample("error-dim", args((4, 6), 2)),
                  Sample("error-int64-input", args(None, 0, lambda: make_tensor((4, 6), torch.int64, device)))]
    for case in cases:
        case.call, case.expects = call, expects
    return cases


def _samples(dtype, device, quick):
    from gems.spec import Sample
    from gems.testing.samples import make_tensor

    out = lambda x, dim: torch._C._nn.glu(x, dim, out=x.new_empty(0))
    return glu_cases(dtype, device, quick, None, None) + [
        Sample("out", lambda: (make_tensor((13, 18), dtype, device), 1), call=out, expects="glu.out"),
        Sample("grad", lambda: (make_tensor((13, 18), dtype, device).requires_grad_(), -1), grad=True,
               expects=("glu", "glu_backward")),
        Sample("grad-dim0", lambda: (make_tensor((6, 7), dtype, device).requires_grad_(), 0), grad=True,
               expects=("glu", "glu_backward")),
    ]


SPECS = [
    OpSpec(
        name="glu", family="pointwise", impls={"glu": glu, "glu.out": glu_out}, call=torch.nn.functional.glu,
        samples=_samples, dtypes=FLOATS, perf=pointwise_perf(1),
    ),
]
