"""lerp (Scalar and Tensor weight; in-place, out=): start + weight * (end - start), with ATen's switch for
|weight| >= 0.5 to end - (end - start) * (1 - weight), which gives end exactly at weight 1 (Lerp.h). Both
forms as one fma each (nvcc contracts ATen's expressions so), in fp32 for fp16/bf16; floating dtypes only.

start and end must have one dtype, and so must a weight tensor of one or more dimensions (RuntimeError);
a 0-d weight tensor takes part in type promotion instead (integer start and end with a float 0-d weight
give a float result), and is read as a number when it is a CPU tensor beside CUDA ones, without rounding
to the result dtype (ATen's cpu-scalar path). A Scalar weight is converted to fp32 (fp64 for fp64), with
Scalar::to's overflow check.
"""

import torch
import triton
import triton.language as tl

from gems.checks import check_exact_out, checked_scalar
from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS
from gems.ops.pointwise.shared import check_cpu_scalars, pointwise_perf
from gems.spec import OpSpec

WEIGHT = {"low": -0.5, "high": 1.5}  # both sides of the switch at 0.5, and extrapolation


@triton.jit
def _lerp(start, end, weight):
    diff = end - start
    # weight - 1 is -(1 - weight) exactly: fma(diff, weight - 1, end) is end - diff * (1 - weight) rounded once
    return tl.where(tl.abs(weight) < 0.5, tl.fma(weight, diff, start), tl.fma(diff, weight - 1, end))


lerp_scalar_op = PointwiseOp("lerp", _lerp, operands=2, scalars=("weight",), dtypes=FLOATS)
lerp_tensor_op = PointwiseOp("lerp_tensor", _lerp, operands=3, dtypes=FLOATS, round_scalars=False)


def _check_end(self, end):
    if self.dtype != end.dtype:
        raise RuntimeError(f"expected dtype {self.dtype} for `end` but got dtype {end.dtype}")


def _scalar_weight(self, end, weight):
    _check_end(self, end)
    return checked_scalar(weight, torch.float64 if self.dtype is torch.float64 else torch.float32)


def _check_tensor_weight(self, end, weight):
    _check_end(self, end)
    if weight.dim() != 0 and weight.dtype != self.dtype:
        raise RuntimeError(f"expected dtype {self.dtype} for `weight` but got dtype {weight.dtype}")
    check_cpu_scalars("lerp", (self, end, weight), (("self", self), ("end", end)))


def lerp_scalar(self, end, weight):
    return lerp_scalar_op(self, end, _scalar_weight(self, end, weight))


def lerp_scalar_(self, end, weight):
    return lerp_scalar_op(self, end, _scalar_weight(self, end, weight), out=self, inplace=True)


def lerp_scalar_out(self, end, weight, *, out):
    return lerp_scalar_op(self, end, _scalar_weight(self, end, weight), out=out)


def lerp_tensor(self, end, weight):
    _check_tensor_weight(self, end, weight)
    return lerp_tensor_op(self, end, weight)


def lerp_tensor_(self, end, weight):
    _check_tensor_weight(self, end, weight)
    return lerp_tensor_op(self, end, weight, out=self, inplace=True)


def lerp_tensor_out(self, end, weight, *, out):
    _check_tensor_weight(self, end, weight)
    if weight.dim() != 0:  # no type promotion then: out= of exactly self's dtype, as ATen's lerp_Tensor wants
        check_exact_out(out, lerp_tensor_op, (self, end, weight), "Found dtype {got} but expected {want}")
    return lerp_tensor_op(self, end, weight, out=out)


def _samples(dtype, device, quick):
    from gems.spec import Sample
    from gems.testing.samples import combined, make_tensor, shape_for, special_values
    from gems.testing.samples_extra import binary_op_samples
    from gems.testing.samples_pwbinary import integer_input_error_samples, ternary_samples

    shape = shape_for(quick)
    make = lambda s=shape, d=dtype, domain=None: make_tensor(s, d, device, **(domain or {}))
    two = lambda: (make(), make())
    wide = torch.float64 if dtype != torch.float64 else torch.float32
    zero_d = lambda d: torch.tensor(0.375, dtype=d, device=device)  # exact in every dtype: promotion, no rounding

    def specials(weight):
        def build():
            values = special_values(dtype, device)
            n = values.numel()
            return values.repeat_interleave(n), values.repeat(n), weight
        return build

    generators = [
        binary_op_samples(torch.lerp, kwargs={"weight": 0.3}, out="lerp.Scalar_out",
                          inplace=("lerp_.Scalar", torch.Tensor.lerp_), scalar=None, float_scalar=False, grad=True),
        ("tensor", ternary_samples(torch.lerp, domains=({}, {}, WEIGHT), other_dtype=lambda d: wide,
                                   out="lerp.Tensor_out", inplace=("lerp_.Tensor", torch.Tensor.lerp_), grad=True,
                                   expects="lerp.Tensor")),
        integer_input_error_samples(lambda x, y: torch.lerp(x, y, 0.5)),
    ]
    cases = combined(*generators)(dtype, device, quick) + [
        Sample("weight-large", two, {"weight": 0.75}),
        Sample("weight-negative", two, {"weight": -0.6}),
        Sample("weight-one", two, {"weight": 1.0}),  # end exactly
        Sample("weight-half", two, {"weight": 0.5}),
        Sample("weight-int", two, {"weight": 2}),
        Sample("weight-overflow-error", two, {"weight": 1e300 if dtype != torch.float64 else 1j}),
        Sample("special-values-weight-large", specials(0.75)),
        Sample("special-values-weight-small", specials(0.25)),
        Sample("end-dtype-error", lambda: (make(), make(d=wide)), {"weight": 0.5}),
        Sample("0d-weight-promoted", lambda: (make(), make(), zero_d(wide)), expects="lerp.Tensor"),
        Sample("0d-weight-integer-inputs", lambda: (make(d=torch.int32), make(d=torch.int32), zero_d(dtype)),
               expects="lerp.Tensor"),
        Sample("0d-weight-out-wider", lambda: (make(), make(), zero_d(dtype)), expects="lerp.Tensor_out",
               call=lambda x, y, w: torch.lerp(x, y, w, out=torch.empty(0, dtype=wide, device=x.device))),
        Sample("cpu-scalar-weight", lambda: (make(), make(), torch.tensor(0.625, dtype=wide)), expects="lerp.Tensor"),
        Sample("cpu-scalar-end", lambda: (make(), torch.tensor(0.7, dtype=dtype), make(d=dtype, domain=WEIGHT)),
               expects="lerp.Tensor"),  # refused on CUDA
        Sample("weight-dtype-error", lambda: (make(), make(), make(d=wide))),
        Sample("out-exact-dtype-error", lambda: (make(), make(), make(domain=WEIGHT)),
               call=lambda x, y, w: torch.lerp(x, y, w, out=torch.empty(0, dtype=wide, device=x.device))),
    ]
    return cases


SPECS = [
    OpSpec(
        name="lerp", family="pointwise",
        impls={"lerp.Scalar": lerp_scalar, "lerp_.Scalar": lerp_scalar_, "lerp.Scalar_out": lerp_scalar_out,
               "lerp.Tensor": lerp_tensor, "lerp_.Tensor": lerp_tensor_, "lerp.Tensor_out": lerp_tensor_out},
        call=torch.lerp, samples=_samples, dtypes=FLOATS,
        perf=pointwise_perf(2, scalars=(0.3,)),
    ),
]
