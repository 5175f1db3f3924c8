"""masked_fill (Scalar and Tensor values, in-place): mask ? value : x. The value is converted to
self's dtype first with ATen's overflow check (checked_scalar), so the result keeps self's dtype."""

import torch
import triton
import triton.language as tl

from gems.checks import checked_scalar
from gems.codegen.pointwise import PointwiseOp, Promotion
from gems.dtypes import ALL
from gems.spec import OpSpec, lazy_perf

# ATen's masked_fill message spells the mask dtype the C++ way.
_C_TYPE_NAMES = {torch.float16: "c10::Half", torch.bfloat16: "c10::BFloat16", torch.float32: "float",
                 torch.float64: "double", torch.int8: "signed char", torch.int16: "short", torch.int32: "int",
                 torch.int64: "long int", torch.uint8: "unsigned char"}


@triton.jit
def _masked_fill(x, mask, value):
    return tl.where(mask, value, x)


# The fill value is converted to self's dtype first (checked_scalar), so the common dtype is self's.
masked_fill_op = PointwiseOp("masked_fill", _masked_fill, operands=3, promote_operands=(0, 2),
                             promotion=Promotion.KEEP_FIRST)


def _fill_value(self, mask, value):
    if mask.dtype is not torch.bool:
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_C_TYPE_NAMES.get(mask.dtype, mask.dtype)}")
    if isinstance(value, torch.Tensor):
        if value.dim() != 0:
            raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value.dim()} dimension(s).")
        value = value.item()  # ATen reads a value tensor as a Scalar too
    return checked_scalar(value, self.dtype)


def masked_fill(self, mask, value):
    return masked_fill_op(self, mask, _fill_value(self, mask, value))


def masked_fill_(self, mask, value):
    return masked_fill_op(self, mask, _fill_value(self, mask, value), out=self, inplace=True)


def _samples(dtype, device, quick):
    from gems.spec import Sample
    from gems.testing.samples import make_tensor, shape_for, special_values

    shape = shape_for(quick)
    rows, cols = shape
    make = lambda s=shape, d=dtype: make_tensor(s, d, device)
    mask = lambda s=shape: make_tensor(s, torch.bool, device)
    value = -2.5 if dtype.is_floating_point else (True if dtype == torch.bool else 7)
    tensor_value = lambda: torch.tensor(value, dtype=dtype, device=device)
    big = {torch.float16: 1e6, torch.bfloat16: 1e39, torch.float32: 1e39, torch.int8: 300, torch.uint8: -300,
           torch.int16: 70000, torch.int32: 2**40}.get(dtype)
    filled = lambda v, x=shape, m=shape: lambda: (make(x), mask(m), v() if callable(v) else v)
    fill_ = lambda x, m, v: x.masked_fill_(m, v)

    def specials():
        values = special_values(dtype, device)
        return values, mask(values.shape), value

    cases = [
        Sample("contiguous", filled(value)),
        Sample("noncontiguous-transposed", lambda: (make((cols, rows)).t(), mask((cols, rows)).t(), value)),
        Sample("noncontiguous-strided", lambda: (make((rows, 2 * cols))[:, ::2], mask(), value)),
        Sample("broadcast-mask", filled(value, shape, (cols,))),
        Sample("broadcast-self", filled(value, (rows, 1))),
        Sample("0d", filled(value, (), ())),
        Sample("empty", filled(value, (0, cols), (0, cols))),
        Sample("special-values", specials),
        Sample("float-value", filled(2.75)),
        Sample("int-value", filled(3)),
        Sample("bool-value", filled(True)),
        Sample("nan-value", filled(float("nan"))),
        Sample("negative-value", filled(-1)),
        Sample("tensor-value", filled(tensor_value), expects="masked_fill.Tensor"),
        Sample("tensor-value-other-dtype", filled(lambda: torch.tensor(1.75, dtype=torch.float64, device=device)),
               expects="masked_fill.Tensor"),
        Sample("tensor-value-1d-error", filled(lambda: tensor_value().reshape(1))),
        Sample("float-mask-error", lambda: (make(), make(d=torch.float32), value)),
        Sample("uint8-mask-error", lambda: (make(), mask().to(torch.uint8), value)),
        Sample("broadcast-error", filled(value, shape, (3,))),
        Sample("inplace", filled(value), expects="masked_fill_.Scalar", call=fill_),
        Sample("inplace-noncontiguous", lambda: (make((cols, rows)).t(), mask(), value),
               expects="masked_fill_.Scalar", call=fill_),
        Sample("inplace-tensor-value", filled(tensor_value), expects="masked_fill_.Tensor", call=fill_),
        Sample("inplace-broadcast-error", filled(value, (rows, 1)), call=fill_),
    ]
    if big is not None:
        cases.append(Sample("overflow-error", filled(big)))
    if dtype.is_floating_point:
        cases.append(Sample("grad", lambda: (make().requires_grad_(), mask(), value), grad=True))
    return cases


SPECS = [
    OpSpec(
        name="masked_fill", family="pointwise",
        impls={"masked_fill.Scalar": masked_fill, "masked_fill.Tensor": masked_fill,
               "masked_fill_.Scalar": masked_fill_, "masked_fill_.Tensor": masked_fill_},
        call=torch.masked_fill, samples=_samples, dtypes=ALL,
        perf=lazy_perf("gems.testing.samples_extra", "masked_perf", value=2.0, shapes="pointwise"),
    ),
]
