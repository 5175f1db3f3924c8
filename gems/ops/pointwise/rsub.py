"""rsub (Tensor and Scalar): other - alpha * self, sub with its operands swapped (Python's ``1 - x`` is
rsub.Scalar), with sub's checks: ATen refuses bool operands, and an alpha the result type cannot hold.
rsub.Tensor_out and rsub.Scalar_out are ATen's generated wrappers around the functional overloads."""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import NUMERIC
from gems.ops.pointwise.shared import combined, edge_samples, pointwise_perf
from gems.ops.pointwise.sub import check_sub
from gems.spec import OpSpec, lazy


@triton.jit
def _rsub(x, y, alpha):
    return y - x * alpha


rsub_op = PointwiseOp("rsub", _rsub, operands=2, scalars=("alpha",))


def rsub(self, other, alpha=1):  # alpha: keyword-only in rsub.Tensor, positional in rsub.Scalar
    check_sub(other, self, alpha)
    return rsub_op(self, other, alpha)


def _samples(dtype, device, quick):
    from gems.testing.samples_extra import alias_samples, binary_op_samples, one_tensor, two_tensors

    def bool_operand(dtype, device, quick):
        return one_tensor()(dtype, device, quick)[0] + one_tensor(torch.bool)(dtype, device, quick)[0], {}

    rsub_scalar = torch.ops.aten.rsub.Scalar
    return alias_samples(binary_op_samples(
        torch.rsub, kwargs={"alpha": 2}, scalar_overload=("rsub.Scalar", rsub_scalar), scalar_expects="rsub.Scalar",
        grad=True), [
        ("reflected", lambda x: 1 - x, "rsub.Scalar", one_tensor()),
        ("reflected-float", lambda x: 0.5 - x, "rsub.Scalar", one_tensor()),
        ("tensor-out", lambda x, y: torch.ops.aten.rsub.Tensor_out(x, y, out=torch.empty_like(x)), "rsub.Tensor",
         two_tensors()),
        ("bool-operand-error", torch.rsub, None, bool_operand),
        ("bool-scalar-error", lambda x: torch.rsub(x.bool(), 1), None, one_tensor()),
        ("alpha-float-on-int", lambda x, y: torch.rsub(x, y, alpha=0.5), "rsub.Tensor", two_tensors()),
    ])(dtype, device, quick)


SPECS = [
    OpSpec(
        name="rsub", family="pointwise", impls={"rsub.Tensor": rsub, "rsub.Scalar": rsub},
        call=torch.rsub,
        samples=combined(_samples,
                         lazy("gems.testing.samples_pwbinary", "scalar_overload_samples", torch.ops.aten.rsub.Scalar,
                              None, "rsub", (2,)),
                         edge_samples("integer_extreme_samples", torch.rsub, operands=2, expects="rsub.Tensor")),
        dtypes=NUMERIC, perf=pointwise_perf(1, scalars=(1.0,)),
    ),
]
