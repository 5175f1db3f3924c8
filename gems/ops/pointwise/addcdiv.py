"""addcdiv (in-place, out=): self + value * tensor1 / tensor2, the three tensors broadcast together and
promoted to their common dtype.

As ATen's CUDA kernel (DeviceAddCmulCdiv.cuh): self + tensor1 / tensor2 for value 1, else
fma(value, tensor1 / tensor2, self), in fp32 for fp16/bf16, the quotient correctly rounded (``div_rn``:
Triton's fp32 ``/`` is an approximation on NVIDIA GPUs). ``value`` is converted as ATen converts it (see
shared.accumulate_scalar). Integer (and bool) tensor1 and tensor2 together are refused with ATen's
RuntimeError ("Integer division with addcdiv is no longer supported..."); a CPU 0-d operand beside CUDA
tensors is refused (RuntimeError), as ATen's CUDA kernel does.
"""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS
from gems.ops.pointwise.shared import accumulate_scalar, check_cpu_scalars, fdiv, pointwise_perf
from gems.spec import OpSpec

# Divisors away from zero keep random samples meaningful (no 1/tiny); the special values have zeros.
DIVISOR = {"low": 0.5, "high": 4.0}
_INTEGER_DIVISION = (
    "Integer division with addcdiv is no longer supported, and in a future release addcdiv will perform a true "
    "division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + value * "
    "torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / "
    "tensor2) for float inputs. The future addcdiv behavior is just the latter implementation: (input + value "
    "* tensor1 / tensor2), for all dtypes.")


@triton.jit
def _addcdiv(x, a, b, value):
    q = fdiv(a, b)
    return tl.where(value == 1, x + q, tl.fma(q, value, x))


addcdiv_op = PointwiseOp("addcdiv", _addcdiv, operands=3, scalars=("value",), dtypes=FLOATS)


def _value(self, tensor1, tensor2, value):
    if not (tensor1.dtype.is_floating_point or tensor1.dtype.is_complex or tensor2.dtype.is_floating_point
            or tensor2.dtype.is_complex):
        raise RuntimeError(_INTEGER_DIVISION)
    tensors = (self, tensor1, tensor2)
    check_cpu_scalars("addcdiv", tensors, (("self", self), ("tensor1", tensor1), ("tensor2", tensor2)))
    return accumulate_scalar(value, addcdiv_op.result_dtypes(list(tensors))[0], all(t.is_cpu for t in tensors))


def addcdiv(self, tensor1, tensor2, *, value=1):
    return addcdiv_op(self, tensor1, tensor2, _value(self, tensor1, tensor2, value))


def addcdiv_(self, tensor1, tensor2, *, value=1):
    return addcdiv_op(self, tensor1, tensor2, _value(self, tensor1, tensor2, value), out=self, inplace=True)


def addcdiv_out(self, tensor1, tensor2, *, value=1, out):
    return addcdiv_op(self, tensor1, tensor2, _value(self, tensor1, tensor2, value), out=out)


def _samples(dtype, device, quick):
    from gems.spec import Sample
    from gems.testing.samples import make_tensor, shape_for
    from gems.testing.samples_pwbinary import ternary_samples

    shape = shape_for(quick)
    make = lambda s=shape, d=dtype, domain=None: make_tensor(s, d, device, **(domain or {}))
    three = lambda: (make(), make(), make(domain=DIVISOR))
    cases = ternary_samples(torch.addcdiv, kwargs={"value": -0.75}, domains=({}, {}, DIVISOR),
                            other_dtype=lambda d: torch.int32, out="addcdiv.out",
                            inplace=("addcdiv_", torch.Tensor.addcdiv_), grad=True)(dtype, device, quick)
    cases += [
        Sample("value-default", three),  # value 1: self + tensor1 / tensor2
        Sample("value-int", three, {"value": 3}),
        Sample("value-overflow-error", three, {"value": 1e300 if dtype != torch.float64 else 1j}),
        Sample("integer-self", lambda: (make(d=torch.int32), make(), make(domain=DIVISOR))),
        Sample("integer-division-error", lambda: (make(), make(d=torch.int32), make(d=torch.int64))),
        Sample("bool-division-error", lambda: (make(), make(d=torch.bool), make(d=torch.bool))),
        Sample("cpu-scalar-tensor2", lambda: (make(), make(), torch.tensor(1.5, dtype=dtype))),  # refused on CUDA
    ]
    return cases


SPECS = [
    OpSpec(
        name="addcdiv", family="pointwise",
        impls={"addcdiv": addcdiv, "addcdiv_": addcdiv_, "addcdiv.out": addcdiv_out},
        call=torch.addcdiv, samples=_samples, dtypes=FLOATS, perf=pointwise_perf(3, domain=DIVISOR),
    ),
]
