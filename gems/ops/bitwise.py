"""Bitwise: bitwise_and, bitwise_or (Tensor, Scalar, Scalar_Tensor, in-place, out=), bitwise_not.

Defined for integers and bool (logical and/or/not there); a floating common dtype raises
NotImplementedError as ATen's dispatch does. ``__or__`` and ``__ior__`` are
CompositeImplicitAutograd aliases that ATen decomposes to ``bitwise_or`` / ``bitwise_or_`` before
the backend key: gems serves them through bitwise_or's overloads.
"""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import PointwiseOp
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, Sample
from gems.testing.perf_inputs import pointwise_perf
from gems.testing.samples import make_tensor, shape_for
from gems.testing.samples_extra import alias_samples, binary_op_samples, unary_op_samples

INTS_AND_BOOL = (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8, torch.bool)


@triton.jit
def _and(x, y):
    return x & y


@triton.jit
def _or(x, y):
    return x | y


@triton.jit
def _not(x):
    if x.dtype == tl.uint8:
        r = 255 - x  # ~x, spelled so: the interpreter's ~ builds a -1 that uint8 cannot hold
    else:
        r = ~x  # on bool (int1) this is logical not
    return r


and_op = PointwiseOp("bitwise_and", _and, operands=2, dtypes=INTS_AND_BOOL)
or_op = PointwiseOp("bitwise_or", _or, operands=2, dtypes=INTS_AND_BOOL)
not_op = PointwiseOp("bitwise_not", _not, operands=1, dtypes=INTS_AND_BOOL)


def _inplace(op):
    def in_place(self, other):
        return op(self, other, out=self, inplace=True)

    return in_place


def bitwise_not_(self):
    return not_op(self, out=self, inplace=True)


def bitwise_not_out(self, *, out):
    # A unary structured kernel in ATen: out= must be of exactly the input's dtype.
    if out.dtype != self.dtype:
        raise RuntimeError(f"Found dtype {out.dtype} but expected {self.dtype}")
    return not_op(self, out=out)


def _with_out(op):
    def with_out(self, other, *, out):
        if out.dtype.is_floating_point and out.device.type != "cpu":
            # ATen's CPU kernel writes a bitwise result into a floating out=; its CUDA kernel refuses.
            raise Fallback("a floating out= is refused or served per device by ATen")
        return op(self, other, out=out)

    return with_out


def _binary_impls(name, op):
    return {f"{name}.Tensor": op, f"{name}.Scalar": op, f"{name}.Scalar_Tensor": op,
            f"{name}_.Tensor": _inplace(op), f"{name}_.Scalar": _inplace(op), f"{name}.Tensor_out": _with_out(op)}


def _binary_samples(name, call, inplace_call):
    ops = getattr(torch.ops.aten, name)
    base = binary_op_samples(call, out=f"{name}.Tensor_out", inplace=(f"{name}_.Tensor", inplace_call),
                             scalar=5, scalar_overload=(f"{name}.Scalar", ops.Scalar),
                             scalar_expects=f"{name}.Scalar")

    def tensor(dtype, device, quick):
        return make_tensor(shape_for(quick), dtype, device)

    extra = [
        ("scalar-tensor", lambda x: ops.Scalar_Tensor(6, x), f"{name}.Scalar_Tensor",
         lambda dtype, device, quick: ((tensor(dtype, device, quick),), {})),
        ("scalar-tensor-call", lambda x: call(6, x), f"{name}.Scalar_Tensor",
         lambda dtype, device, quick: ((tensor(dtype, device, quick),), {})),
        ("inplace-scalar", lambda x: getattr(x, f"{name}_")(3), f"{name}_.Scalar",
         lambda dtype, device, quick: ((tensor(dtype, device, quick),), {})),
        ("float-error", call, None, lambda dtype, device, quick: (
            (make_tensor(shape_for(quick), torch.float32, device), tensor(dtype, device, quick)), {})),
        ("negative-scalar", lambda x: call(x, -3), f"{name}.Scalar",
         lambda dtype, device, quick: ((tensor(dtype, device, quick),), {})),
    ]
    return alias_samples(base, extra)


def _or_samples():
    base = _binary_samples("bitwise_or", torch.bitwise_or, lambda x, y: x.bitwise_or_(y))

    def tensor(dtype, device, quick):
        return make_tensor(shape_for(quick), dtype, device)

    def two(dtype, device, quick):
        return (tensor(dtype, device, quick), tensor(dtype, device, quick)), {}

    # | and |= run __or__ / __ior__, which ATen decomposes into bitwise_or's overloads.
    return alias_samples(base, [
        ("or-operator", lambda x, y: x | y, "bitwise_or.Tensor", two),
        ("or-operator-scalar", lambda x: x | 5, "bitwise_or.Scalar",
         lambda dtype, device, quick: ((tensor(dtype, device, quick),), {})),
        ("or-dunder", lambda x, y: torch.ops.aten.__or__.Tensor(x, y), "bitwise_or.Tensor", two),
        ("or-dunder-scalar", lambda x: torch.ops.aten.__or__.Scalar(x, 5), "bitwise_or.Scalar",
         lambda dtype, device, quick: ((tensor(dtype, device, quick),), {})),
        ("ior-operator", lambda x, y: x.__ior__(y), "bitwise_or_.Tensor", two),
        ("ior-operator-scalar", lambda x: x.__ior__(5), "bitwise_or_.Scalar",
         lambda dtype, device, quick: ((tensor(dtype, device, quick),), {})),
        ("ior-dunder", lambda x, y: torch.ops.aten.__ior__.Tensor(x, y), "bitwise_or_.Tensor", two),
        ("ior-dunder-scalar", lambda x: torch.ops.aten.__ior__.Scalar(x, 5), "bitwise_or_.Scalar",
         lambda dtype, device, quick: ((tensor(dtype, device, quick),), {})),
    ])


def _not_samples():
    base = unary_op_samples(torch.bitwise_not, out="bitwise_not.out",
                            inplace=("bitwise_not_", torch.Tensor.bitwise_not_), exact_out=True)

    def samples(dtype, device, quick):
        cases = base(dtype, device, quick)
        shape = shape_for(quick)
        cases += [
            Sample("operator", (make_tensor(shape, dtype, device),), call=lambda x: ~x),
            Sample("float-error", (make_tensor(shape, torch.float32, device),)),
        ]
        return cases

    return samples


SPECS = [
    OpSpec(
        name="bitwise_and", family="pointwise", impls=_binary_impls("bitwise_and", and_op), call=torch.bitwise_and,
        samples=_binary_samples("bitwise_and", torch.bitwise_and, lambda x, y: x.bitwise_and_(y)),
        dtypes=INTS_AND_BOOL, tolerance="exact", perf=pointwise_perf(2),
    ),
    OpSpec(
        name="bitwise_or", family="pointwise", impls=_binary_impls("bitwise_or", or_op), call=torch.bitwise_or,
        samples=_or_samples(), dtypes=INTS_AND_BOOL, tolerance="exact", perf=pointwise_perf(2),
    ),
    OpSpec(
        name="bitwise_not", family="pointwise",
        impls={"bitwise_not": not_op, "bitwise_not_": bitwise_not_, "bitwise_not.out": bitwise_not_out},
        call=torch.bitwise_not, samples=_not_samples(), dtypes=INTS_AND_BOOL, tolerance="exact",
        perf=pointwise_perf(1),
    ),
]
