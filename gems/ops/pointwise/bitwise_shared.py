"""bitwise_and and bitwise_or share their overload table and samples: one place for both (the
operator files hold their kernels and declarations). Defined for integers and bool (logical and/or
there); a floating common dtype raises NotImplementedError as ATen's dispatch does."""

import torch

from gems.ops.pointwise.shared import inplace_of
from gems.runtime.registration import Fallback


def _with_out(op):
    def with_out(self, other, *, out):
        if out.dtype.is_floating_point and out.device.type != "cpu":
            # ATen's CPU kernel writes a bitwise result into a floating out=; its CUDA kernel refuses.
            raise Fallback("a floating out= is refused or served per device by ATen")
        return op(self, other, out=out)

    return with_out


def binary_impls(name, op):
    return {f"{name}.Tensor": op, f"{name}.Scalar": op, f"{name}.Scalar_Tensor": op,
            f"{name}_.Tensor": inplace_of(op), f"{name}_.Scalar": inplace_of(op), f"{name}.Tensor_out": _with_out(op)}


def binary_samples(name, call, inplace_call, aliases=()):
    """The samples of ``name`` (bitwise_and, bitwise_or), plus ``aliases`` for alias_samples; the
    generator is made when conformance first calls it."""
    ops = getattr(torch.ops.aten, name)

    def samples(dtype, device, quick):
        from gems.testing.samples_extra import alias_samples, binary_op_samples, one_tensor

        base = binary_op_samples(call, out=f"{name}.Tensor_out", inplace=(f"{name}_.Tensor", inplace_call),
                                 scalar=5, scalar_overload=(f"{name}.Scalar", ops.Scalar),
                                 scalar_expects=f"{name}.Scalar")
        float_and_tensor = lambda dtype, device, quick: (
            one_tensor(torch.float32)(dtype, device, quick)[0] + one_tensor()(dtype, device, quick)[0], {})
        extra = [
            ("scalar-tensor", lambda x: ops.Scalar_Tensor(6, x), f"{name}.Scalar_Tensor", one_tensor()),
            ("scalar-tensor-call", lambda x: call(6, x), f"{name}.Scalar_Tensor", one_tensor()),
            ("inplace-scalar", lambda x: getattr(x, f"{name}_")(3), f"{name}_.Scalar", one_tensor()),
            ("float-error", call, None, float_and_tensor),
            ("negative-scalar", lambda x: call(x, -3), f"{name}.Scalar", one_tensor()),
            *aliases,
        ]
        return alias_samples(base, extra)(dtype, device, quick)

    return samples
