"""bitwise_and, bitwise_or and bitwise_xor share their overload table and samples: one place for all
three (the operator files hold their kernels and declarations). Defined for integers and bool (logical
and/or/xor there); a floating common dtype raises NotImplementedError as ATen's dispatch does."""

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


def operator_aliases(name, dunder, operator_fn):
    """Alias samples (for ``binary_samples(aliases=...)``) of the CompositeImplicitAutograd dunders that ATen
    decomposes into ``name``'s overloads: ``x ^ y`` and ``aten.__xor__`` for dunder "xor", with
    ``operator_fn`` the Python operator (operator.xor); the in-place ``__i{dunder}__`` forms likewise."""
    ops, iops = getattr(torch.ops.aten, f"__{dunder}__"), getattr(torch.ops.aten, f"__i{dunder}__")
    return [
        (f"{dunder}-operator", operator_fn, f"{name}.Tensor", _tensors(2)),
        (f"{dunder}-operator-scalar", lambda x: operator_fn(x, 5), f"{name}.Scalar", _tensors(1)),
        (f"{dunder}-dunder", lambda x, y: ops.Tensor(x, y), f"{name}.Tensor", _tensors(2)),
        (f"{dunder}-dunder-scalar", lambda x: ops.Scalar(x, 5), f"{name}.Scalar", _tensors(1)),
        (f"i{dunder}-operator", lambda x, y: getattr(x, f"__i{dunder}__")(y), f"{name}_.Tensor", _tensors(2)),
        (f"i{dunder}-dunder-scalar", lambda x: iops.Scalar(x, 5), f"{name}_.Scalar", _tensors(1)),
    ]


def _tensors(count):
    def make(dtype, device, quick):
        from gems.testing.samples_extra import one_tensor, two_tensors

        return (two_tensors() if count == 2 else one_tensor())(dtype, device, quick)

    return make


# --------------------------------------------------------------------------- shifts


def shift_impls(name, dunder, op):
    """bitwise_left_shift / bitwise_right_shift (``name``) and their real-kernel dunders ``__lshift__`` /
    ``__ilshift__`` (``dunder`` "lshift"): every overload but the CompositeExplicitAutograd out= wrappers
    (Tensor_Scalar_out, Scalar_Tensor_out, __lshift__.Scalar_out...), which call Tensor_out or the
    functional form."""
    inplace = inplace_of(op)
    return {f"{name}.Tensor": op, f"{name}.Tensor_Scalar": op, f"{name}.Scalar_Tensor": op,
            f"{name}.Tensor_out": _with_out(op), f"{name}_.Tensor": inplace, f"{name}_.Tensor_Scalar": inplace,
            f"__{dunder}__.Tensor": op, f"__{dunder}__.Scalar": op,
            f"__i{dunder}__.Tensor": inplace, f"__i{dunder}__.Scalar": inplace}


# Shift amounts: negative ones and ones past the bit width of every integer dtype (ATen gives 0, or the
# sign for a right shift, where C leaves them undefined).
SHIFT_AMOUNTS = (-70, -9, -1, 0, 1, 3, 6, 7, 8, 9, 15, 16, 17, 31, 32, 33, 62, 63, 64, 65, 127)


def shift_samples(name, dunder, operator_fn):
    """Samples of a shift ``name`` (operator_fn: operator.lshift), the generator made when conformance first
    calls it: the binary variants with small amounts, every amount of SHIFT_AMOUNTS the dtype holds, the
    scalar and dunder overloads, and the float and bool inputs ATen refuses."""
    ops, dunder_ops, idunder_ops = (getattr(torch.ops.aten, n) for n in (name, f"__{dunder}__", f"__i{dunder}__"))
    call = getattr(torch, name)

    def amounts(dtype, device, quick):
        from gems.testing.samples import make_tensor

        info = torch.iinfo(dtype)
        y = torch.tensor([a for a in SHIFT_AMOUNTS if info.min <= a <= info.max], dtype=dtype)
        x = make_tensor((y.numel(),), dtype, "cpu", int_low=info.min, int_high=info.max - 1)
        x[:2] = torch.tensor([info.max, info.min], dtype=dtype)
        return (x.repeat(y.numel()).to(device), y.repeat_interleave(x.numel()).to(device)), {}

    def float_and_tensor(dtype, device, quick):
        from gems.testing.samples_extra import one_tensor

        return one_tensor(torch.float32)(dtype, device, quick)[0] + one_tensor()(dtype, device, quick)[0], {}

    def samples(dtype, device, quick):
        from gems.testing.samples_extra import alias_samples, binary_op_samples, one_tensor

        base = binary_op_samples(call, out=f"{name}.Tensor_out", inplace=(f"{name}_.Tensor", getattr(torch.Tensor,
                                 f"{name}_")), rhs_domain={"int_low": -2, "int_high": 9}, scalar=3,
                                 scalar_overload=(f"{name}.Tensor_Scalar", ops.Tensor_Scalar),
                                 scalar_expects=f"{name}.Tensor_Scalar")
        extra = [
            ("shift-amounts", call, f"{name}.Tensor", amounts),
            ("scalar-tensor", lambda x: call(3, x), f"{name}.Scalar_Tensor", one_tensor()),
            ("scalar-past-width", lambda x: call(x, 100), f"{name}.Tensor_Scalar", one_tensor()),
            ("inplace-scalar", lambda x: getattr(x, f"{name}_")(2), f"{name}_.Tensor_Scalar", one_tensor()),
            ("dunder", lambda x, y: operator_fn(x, y.abs() % 8), f"__{dunder}__.Tensor", _tensors(2)),
            ("dunder-scalar", lambda x: operator_fn(x, 2), f"__{dunder}__.Scalar", one_tensor()),
            ("dunder-overload", lambda x, y: dunder_ops.Tensor(x, y), f"__{dunder}__.Tensor", _tensors(2)),
            ("dunder-inplace", lambda x, y: getattr(x, f"__i{dunder}__")(y.abs() % 8), f"__i{dunder}__.Tensor",
             _tensors(2)),
            ("dunder-inplace-scalar", lambda x: idunder_ops.Scalar(x, 2), f"__i{dunder}__.Scalar", one_tensor()),
            ("float-error", call, None, float_and_tensor),
            ("bool-error", lambda x: call(x.bool(), x.bool()), None, one_tensor()),
            ("dunder-float-scalar-error", lambda x: operator_fn(x, 2.5), None, one_tensor()),
        ]
        return alias_samples(base, extra)(dtype, device, quick)

    return samples
