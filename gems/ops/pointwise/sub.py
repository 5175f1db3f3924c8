"""sub (Tensor and Scalar, in-place, out=): x - alpha * y; ATen refuses bool operands. sub.Scalar (reached
from C++) computes what sub.Tensor computes with a wrapped number; its out= form (sub.Scalar_out) is ATen's
generated wrapper around sub.Scalar. rsub.py computes y - alpha * x with the same checks."""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import NUMERIC
from gems.ops.pointwise.shared import check_alpha, pointwise_perf
from gems.spec import OpSpec


@triton.jit
def _sub(x, y, alpha):
    return x - y * alpha


sub_op = PointwiseOp("sub", _sub, operands=2, scalars=("alpha",))


def _is_bool(value) -> bool:
    return value.dtype is torch.bool if isinstance(value, torch.Tensor) else isinstance(value, bool)


def check_sub(self, other, alpha):
    if _is_bool(self) or _is_bool(other):
        if _is_bool(self) and _is_bool(other):
            raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                               "Use the `^` or `logical_xor()` operator instead.")
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.")
    check_alpha(self, other, alpha)


def sub(self, other, alpha=1):  # alpha: keyword-only in sub.Tensor, positional in sub.Scalar
    check_sub(self, other, alpha)
    return sub_op(self, other, alpha)


def sub_(self, other, alpha=1):
    check_sub(self, other, alpha)
    return sub_op(self, other, alpha, out=self, inplace=True)


def sub_out(self, other, *, alpha=1, out):
    check_sub(self, other, alpha)
    return sub_op(self, other, alpha, out=out)


def _samples(dtype, device, quick):
    from gems.testing.samples_edges import integer_extreme_samples
    from gems.testing.samples_extra import alias_samples, binary_op_samples, one_tensor, two_tensors
    from gems.testing.samples_pwbinary import scalar_overload_samples

    def bool_operand(dtype, device, quick):
        return one_tensor()(dtype, device, quick)[0] + one_tensor(torch.bool)(dtype, device, quick)[0], {}

    def bool_scalar(dtype, device, quick):
        return one_tensor()(dtype, device, quick)[0] + (True,), {}

    generate = alias_samples(
        binary_op_samples(torch.sub, out="sub.out", inplace=("sub_.Tensor", lambda x, y, **k: x.sub_(y, **k)),
                          grad=True, kwargs={"alpha": 2}, scalar_overload=("sub.Scalar", torch.ops.aten.sub.Scalar)),
        [("bool-operand-error", torch.sub, None, bool_operand),
         ("bool-scalar-error", torch.sub, None, bool_scalar),
         ("alpha-float-on-int", lambda x, y: torch.sub(x, y, alpha=0.5), None, two_tensors())])
    extremes = integer_extreme_samples(operands=2, expects="sub.Tensor")
    scalar = scalar_overload_samples(torch.ops.aten.sub.Scalar, torch.ops.aten.sub_.Scalar, "sub", (2,))
    return generate(dtype, device, quick) + extremes(dtype, device, quick) + scalar(dtype, device, quick)


SPECS = [
    OpSpec(
        name="sub", family="pointwise",
        impls={"sub.Tensor": sub, "sub_.Tensor": sub_, "sub.out": sub_out, "sub.Scalar": sub, "sub_.Scalar": sub_},
        call=torch.sub, samples=_samples, dtypes=NUMERIC, perf=pointwise_perf(2),
    ),
]
