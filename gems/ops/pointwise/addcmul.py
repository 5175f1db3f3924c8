"""addcmul (in-place, out=): self + value * tensor1 * tensor2, the three tensors broadcast together and
promoted to their common dtype.

As ATen's CUDA kernel (DeviceAddCmulCdiv.cuh): fma(tensor1, tensor2, self) for value 1, else
fma(value, tensor1 * tensor2, self), in fp32 for fp16/bf16; integers wrap in the result dtype (ATen
computes in int64 and truncates: the same bits). ``value`` is converted as ATen converts it (see
shared.accumulate_scalar): a float value on integer tensors is truncated. Bool is refused
(NotImplementedError), as ATen's dispatch does; a CPU 0-d self or tensor1 beside CUDA tensors is refused
(RuntimeError), a CPU 0-d tensor2 is read as a number.
"""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import NUMERIC
from gems.ops.pointwise.shared import accumulate_scalar, check_cpu_scalars, pointwise_perf
from gems.spec import OpSpec


@triton.jit
def _addcmul(x, a, b, value):
    if x.dtype.is_floating():
        r = tl.where(value == 1, tl.fma(a, b, x), tl.fma(a * b, value, x))
    else:
        r = x + value * (a * b)
    return r


addcmul_op = PointwiseOp("addcmul", _addcmul, operands=3, scalars=("value",), dtypes=NUMERIC)


def _value(self, tensor1, tensor2, value):
    tensors = (self, tensor1, tensor2)
    check_cpu_scalars("addcmul", tensors, (("self", self), ("tensor1", tensor1)))
    common = addcmul_op.result_dtypes(list(tensors))[0]
    return accumulate_scalar(value, common, all(t.is_cpu for t in tensors))


def addcmul(self, tensor1, tensor2, *, value=1):
    return addcmul_op(self, tensor1, tensor2, _value(self, tensor1, tensor2, value))


def addcmul_(self, tensor1, tensor2, *, value=1):
    return addcmul_op(self, tensor1, tensor2, _value(self, tensor1, tensor2, value), out=self, inplace=True)


def addcmul_out(self, tensor1, tensor2, *, value=1, out):
    return addcmul_op(self, tensor1, tensor2, _value(self, tensor1, tensor2, value), out=out)


def _samples(dtype, device, quick):
    from gems.spec import Sample
    from gems.testing.samples import make_tensor, shape_for
    from gems.testing.samples_pwbinary import ternary_samples

    shape = shape_for(quick)
    make = lambda s=shape, d=dtype: make_tensor(s, d, device)
    three = lambda: (make(), make(), make())
    cases = ternary_samples(torch.addcmul, kwargs={"value": 2}, other_dtype=_other, out="addcmul.out",
                            inplace=("addcmul_", torch.Tensor.addcmul_), grad=True)(dtype, device, quick)
    cpu = lambda: torch.tensor(1.5 if dtype.is_floating_point else 3, dtype=dtype)
    cases += [
        Sample("value-default", three),  # value 1: fma(tensor1, tensor2, self)
        Sample("value-float", three, {"value": 2.5}),  # truncated to 2 for integers
        Sample("value-bool", three, {"value": True}),
        Sample("value-complex-error", three, {"value": 1 + 2j}),
        Sample("bool-error", lambda: (make(d=torch.bool), make(d=torch.bool), make(d=torch.bool))),
        Sample("cpu-scalar-tensor2", lambda: (make(), make(), cpu())),
        Sample("cpu-scalar-self", lambda: (cpu(), make(), make())),  # refused on CUDA
        Sample("cpu-scalar-tensor1", lambda: (make(), cpu(), make())),  # refused on CUDA
    ]
    if dtype.is_floating_point:
        cases.append(Sample("value-overflow-error", three, {"value": 1e300 if dtype != torch.float64 else 1j}))
    return cases


def _other(dtype):
    """The dtype of tensor2 in the mixed-dtype sample: integer beside floats, float beside integers."""
    return torch.int32 if dtype.is_floating_point else torch.float32


SPECS = [
    OpSpec(
        name="addcmul", family="pointwise",
        impls={"addcmul": addcmul, "addcmul_": addcmul_, "addcmul.out": addcmul_out},
        call=torch.addcmul, samples=_samples, dtypes=NUMERIC, perf=pointwise_perf(3),
    ),
]
