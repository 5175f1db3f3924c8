"""xlogy (Tensor, Scalar_Self, Scalar_Other; in-place, out=): x * log(y), 0 where x is 0 (even for y 0 or
inf), NaN where y is NaN; libdevice's log (Triton's fp32 log is an approximation on NVIDIA GPUs, with an
absolute error that swamps log(y) near y = 1). Integers and bool are computed and returned as the default
float dtype. ``special_xlogy`` is a CompositeImplicitAutograd alias that ATen decomposes to xlogy before
the backend key: gems serves it through xlogy's overloads (see the samples)."""

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp, Promotion
from gems.dtypes import ALL
from gems.ops.pointwise.shared import binary_samples, inplace_of, out_of, pointwise_perf
from gems.spec import OpSpec

# Mostly positive y: a negative one makes log NaN (the special values have those). Integers up to 6: every
# fp32 log rounds their logarithms alike (the vectorized torch.log behind the interpreter's libdevice and
# the correctly rounded std::log of ATen's CPU kernel differ by an ulp at 7, 47, 49), which an integer
# xlogy into a float64 out= is judged on at float64 tolerance.
Y_DOMAIN = {"low": -0.5, "high": 4.0, "int_low": 0, "int_high": 6}


@triton.jit
def _xlogy(x, y):
    r = tl.where(x == 0, 0.0, x * libdevice.log(y))
    return tl.where(y != y, y, r)


xlogy_op = PointwiseOp("xlogy", _xlogy, operands=2, promotion=Promotion.INT_TO_FLOAT)


def _samples(dtype, device, quick):
    from gems.testing.samples import make_tensor, shape_for
    from gems.testing.samples_extra import alias_samples, one_tensor, two_tensors

    def zero_x(dtype, device, quick):
        y = torch.tensor([0.0, 1.0, float("inf"), float("nan"), -1.0, 0.5], dtype=torch.float64)
        if not dtype.is_floating_point:
            y = y[torch.isfinite(y)]
        x = torch.zeros(y.shape, dtype=torch.float64)
        return (x.to(dtype).to(device), y.to(dtype).to(device)), {}

    def positive(dtype, device, quick):
        return (make_tensor(shape_for(quick), dtype, device, **Y_DOMAIN),), {}

    return alias_samples(binary_samples(
        torch.xlogy, out="xlogy.OutTensor", inplace=("xlogy_.Tensor", torch.Tensor.xlogy_), grad=True,
        rhs_domain=Y_DOMAIN, scalar=2.5, scalar_overload=("xlogy.Scalar_Other", torch.ops.aten.xlogy.Scalar_Other),
        scalar_expects="xlogy.Scalar_Other", result="float"), [
        ("zero-x", torch.xlogy, "xlogy.Tensor", zero_x),
        ("scalar-self", lambda y: torch.xlogy(3, y), "xlogy.Scalar_Self", positive),
        ("scalar-self-zero", lambda y: torch.xlogy(0, y), "xlogy.Scalar_Self", one_tensor()),
        ("inplace-scalar", lambda x: x.double().xlogy_(2.5), "xlogy_.Scalar_Other", one_tensor()),
        # xlogy.OutScalar_Self / OutScalar_Other are CompositeExplicitAutograd wrappers of xlogy.OutTensor
        ("scalar-out", lambda x: torch.xlogy(x, 2.5, out=torch.empty(0, dtype=torch.float64, device=x.device)),
         "xlogy.OutTensor", one_tensor()),
        ("special_xlogy", torch.special.xlogy, "xlogy.Tensor", two_tensors(rhs_domain=Y_DOMAIN)),
        ("special_xlogy-scalar-self", lambda y: torch.special.xlogy(2, y), "xlogy.Scalar_Self", positive),
    ])(dtype, device, quick)


SPECS = [
    OpSpec(
        name="xlogy", family="pointwise",
        impls={"xlogy.Tensor": xlogy_op, "xlogy.Scalar_Self": xlogy_op, "xlogy.Scalar_Other": xlogy_op,
               "xlogy.OutTensor": out_of(xlogy_op), "xlogy_.Tensor": inplace_of(xlogy_op),
               "xlogy_.Scalar_Other": inplace_of(xlogy_op)},
        call=torch.xlogy, samples=_samples, dtypes=ALL, perf=pointwise_perf(2, domain={"low": 0.0, "high": 4.0}),
    ),
]
