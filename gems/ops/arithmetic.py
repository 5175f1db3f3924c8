"""add and mul: two-operand arithmetic with broadcasting, scalars, alpha, out= and in-place forms."""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter needs it in every kernel module)

from gems.codegen.pointwise import PointwiseOp
from gems.spec import OpSpec
from gems.testing.perf_inputs import pointwise_perf
from gems.testing.samples import binary_samples

NUMERIC = (torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.int16, torch.int32, torch.int64)


@triton.jit
def _add(x, y, alpha):
    return x + y * alpha


@triton.jit
def _mul(x, y):
    return x * y


add_op = PointwiseOp("add", _add, operands=2, scalars=("alpha",))
mul_op = PointwiseOp("mul", _mul, operands=2)


def _check_alpha(self, other, alpha):
    """ATen refuses an alpha its result type cannot hold."""
    if alpha == 1:
        return
    dtype = torch.result_type(self, other)
    if isinstance(alpha, bool) and dtype != torch.bool:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if isinstance(alpha, float) and not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")


def add(self, other, *, alpha=1):
    _check_alpha(self, other, alpha)
    return add_op(self, other, alpha)


def add_(self, other, *, alpha=1):
    _check_alpha(self, other, alpha)
    return add_op(self, other, alpha, out=self, inplace=True)


def add_out(self, other, *, alpha=1, out):
    _check_alpha(self, other, alpha)
    return add_op(self, other, alpha, out=out)


def mul(self, other):
    return mul_op(self, other)


def mul_(self, other):
    return mul_op(self, other, out=self, inplace=True)


def mul_out(self, other, *, out):
    return mul_op(self, other, out=out)


SPECS = [
    OpSpec(
        name="add", family="pointwise",
        impls={"add.Tensor": add, "add_.Tensor": add_, "add.out": add_out},
        call=torch.add,
        samples=binary_samples(out="add.out", inplace=("add_.Tensor", lambda x, y, **k: x.add_(y, **k)),
                               grad=True, extra={"alpha": 2}),
        dtypes=NUMERIC, perf=pointwise_perf(2),
    ),
    OpSpec(
        name="mul", family="pointwise",
        impls={"mul.Tensor": mul, "mul_.Tensor": mul_, "mul.out": mul_out},
        call=torch.mul,
        samples=binary_samples(out="mul.out", inplace=("mul_.Tensor", lambda x, y: x.mul_(y)), grad=True),
        dtypes=NUMERIC, perf=pointwise_perf(2),
    ),
]
