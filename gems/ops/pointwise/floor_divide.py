"""floor_divide (Tensor and Scalar, in-place, out=): div's floor division (see div.py), with its
integer division-by-zero error on CPU."""

import torch

from gems.checks import check_exact_out
from gems.dtypes import NUMERIC
from gems.ops.pointwise.div import DIVISOR, ZERO_DIVISION_CHECK, check_zero_division, floor_div_op, special_divide
from gems.ops.pointwise.shared import pointwise_perf
from gems.spec import OpSpec


def floor_divide(self, other):
    check_zero_division(self, other)
    return floor_div_op(self, other)


def floor_divide_(self, other):
    check_zero_division(self, other)
    return floor_div_op(self, other, out=self, inplace=True)


def floor_divide_out(self, other, *, out):
    check_zero_division(self, other)
    return floor_div_op(self, other, out=out)


def floor_divide_scalar_out(self, other, *, out):
    check_exact_out(out, floor_div_op, (self, other), "Expected out tensor to have dtype {want}, but got {got} "
                    "instead")
    return floor_divide_out(self, other, out=out)


def _samples(dtype, device, quick):
    from gems.testing.samples_edges import exact_half_samples, integer_extreme_samples
    from gems.testing.samples_extra import alias_samples, binary_op_samples, one_tensor

    wrong_out = lambda x: torch.empty(0, dtype=torch.float64 if x.dtype != torch.float64 else torch.float32,
                                      device=x.device)

    def scalar_out_args(dtype, device, quick):
        return one_tensor()(dtype, device, quick)[0] + (torch.empty(0, dtype=dtype, device=device),), {}

    generators = [
        # The generic special-values pairs hold integer zero divisors; "special-values-nonzero" replaces them.
        binary_op_samples(
            torch.floor_divide, out="floor_divide.out",
            inplace=("floor_divide_.Tensor", lambda x, y: x.floor_divide_(y)), rhs_domain=DIVISOR, nonzero_rhs=True,
            int_specials=False, scalar_overload=("floor_divide.Scalar", torch.ops.aten.floor_divide.Scalar),
            zero_division=("floor_divide", torch.floor_divide)),
        exact_half_samples(kind="quotients", expects="floor_divide"),
        integer_extreme_samples(operands=2, nonzero_rhs=True, expects="floor_divide"),
        alias_samples(lambda dtype, device, quick: [], [
            ("special-values-nonzero", torch.floor_divide, "floor_divide", special_divide),
            ("inplace-scalar-overload", lambda x: torch.ops.aten.floor_divide_.Scalar(x, 3), "floor_divide_.Scalar",
             one_tensor()),
            ("scalar-out", lambda x, o: torch.ops.aten.floor_divide.Scalar_out(x, 3, out=o),
             "floor_divide.Scalar_out", scalar_out_args),
            ("scalar-out-wrong-dtype", lambda x: torch.ops.aten.floor_divide.Scalar_out(x, 3, out=wrong_out(x)),
             None, one_tensor()),
        ]),
    ]
    return [case for generate in generators for case in generate(dtype, device, quick)]


SPECS = [
    OpSpec(
        name="floor_divide", family="pointwise",
        impls={"floor_divide": floor_divide, "floor_divide.Scalar": floor_divide,
               "floor_divide_.Tensor": floor_divide_, "floor_divide_.Scalar": floor_divide_,
               "floor_divide.out": floor_divide_out, "floor_divide.Scalar_out": floor_divide_scalar_out},
        call=torch.floor_divide, samples=_samples, dtypes=NUMERIC, perf=pointwise_perf(2, domain=DIVISOR),
        aten_decisions=ZERO_DIVISION_CHECK,
    ),
]
