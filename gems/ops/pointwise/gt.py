"""gt: x > y (Tensor and Scalar, out=); NaN compares false. ``greater`` is a CompositeImplicitAutograd
alias that ATen decomposes to gt before the backend key, so gt's overloads serve it (see the samples).
The operands are promoted to their common dtype (a scalar is rounded to it first, so an int8 tensor
compared with 1000 compares with 1000 wrapped to int8, as ATen does); the result is bool."""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)

from gems.codegen.pointwise import PointwiseOp, Promotion
from gems.dtypes import ALL
from gems.ops.pointwise.shared import pointwise_perf
from gems.spec import OpSpec


@triton.jit
def _gt(x, y):
    return x > y


gt_op = PointwiseOp("gt", _gt, operands=2, promotion=Promotion.BOOL)


def _samples(dtype, device, quick):
    from gems.testing.samples import make_tensor, shape_for
    from gems.testing.samples_extra import alias_samples, comparison_samples, one_tensor, two_tensors

    def out_args(dtype, device, quick):
        return two_tensors()(dtype, device, quick)[0] + (torch.empty(0, dtype=torch.bool, device=device),), {}

    def scalar_out_args(dtype, device, quick):
        return (make_tensor(shape_for(quick), dtype, device), torch.empty(0, dtype=torch.bool, device=device)), {}

    generate = alias_samples(comparison_samples("gt", torch.gt, ("gt.Tensor_out", "gt.Scalar_out")), [
        ("greater-tensor", torch.greater, "gt.Tensor", two_tensors()),
        ("greater-scalar", lambda x: torch.greater(x, 1), "gt.Scalar", one_tensor()),
        ("greater-out", lambda x, y, o: torch.greater(x, y, out=o), "gt.Tensor_out", out_args),
        ("greater-scalar-out", lambda x, o: torch.greater(x, 1, out=o), "gt.Scalar_out", scalar_out_args),
    ])
    return generate(dtype, device, quick)


SPECS = [
    OpSpec(
        # the op itself serves every overload: (self, other, out=None)
        name="gt", family="pointwise",
        impls={"gt.Tensor": gt_op, "gt.Scalar": gt_op, "gt.Tensor_out": gt_op,
               "gt.Scalar_out": gt_op},
        call=torch.gt, samples=_samples,
        dtypes=ALL, tolerance="exact", perf=pointwise_perf(2),
    ),
]
