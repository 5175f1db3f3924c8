"""add (Tensor and Scalar, in-place, out=): x + alpha * y; bool + bool is a logical or, as in ATen.
add.Scalar (reached from C++: autograd formulas, optimizers) computes what add.Tensor computes with a
wrapped number; its out= form (add.Scalar_out) is ATen's generated wrapper around add.Scalar."""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import ALL
from gems.ops.pointwise.shared import binary_samples, check_alpha, combined, edge_samples, pointwise_perf
from gems.spec import OpSpec, lazy


@triton.jit
def _add(x, y, alpha):
    if x.dtype == tl.int1:
        # bool + bool is logical or in ATen (integer 1 + 1 would wrap to 0 in one bit)
        r = (x.to(tl.int32) + y.to(tl.int32) * alpha) != 0
    else:
        r = x + y * alpha
    return r


add_op = PointwiseOp("add", _add, operands=2, scalars=("alpha",))


def add(self, other, alpha=1):  # alpha: keyword-only in add.Tensor, positional in add.Scalar
    check_alpha(self, other, alpha)
    return add_op(self, other, alpha)


def add_(self, other, alpha=1):
    check_alpha(self, other, alpha)
    return add_op(self, other, alpha, out=self, inplace=True)


def add_out(self, other, *, alpha=1, out):
    check_alpha(self, other, alpha)
    return add_op(self, other, alpha, out=out)


SPECS = [
    OpSpec(
        name="add", family="pointwise",
        impls={"add.Tensor": add, "add_.Tensor": add_, "add.out": add_out, "add.Scalar": add,
               "add_.Scalar": add_},
        call=torch.add,
        samples=combined(
            binary_samples(torch.add, out="add.out", inplace=("add_.Tensor", lambda x, y, **k: x.add_(y, **k)),
                           grad=True, kwargs={"alpha": 2}, scalar_overload=("add.Scalar", torch.ops.aten.add.Scalar)),
            lazy("gems.testing.samples_pwbinary", "scalar_overload_samples", torch.ops.aten.add.Scalar,
                 torch.ops.aten.add_.Scalar, "add", (2,)),
            edge_samples("integer_extreme_samples", torch.add, operands=2, expects="add.Tensor"),
            edge_samples("exact_half_samples", torch.add, kind="sums", expects="add.Tensor")),
        dtypes=ALL, perf=pointwise_perf(2),
    ),
]
