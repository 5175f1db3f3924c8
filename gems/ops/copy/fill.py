"""fill (fill_.Scalar, fill_.Tensor, fill.Scalar, fill.Tensor and their out= forms): every element of a tensor
set to one value.

A Python value goes through ATen's checked conversion (gems.checks.checked_scalar: 300 into int8 raises); a
0-d tensor value is copied as copy_ copies it (300 into int8 wraps), broadcast by the copy kernel with no read
of the value on the host, after a clone when it is a view of the tensor being filled (ATen's order). A dense
tensor is filled by the flat fill kernel of gems/ops/creation/fill.py, any other layout by the tiled copy kernel
in fill mode (gems/ops/copy/shared.py); an expanded tensor is allowed for a Python value (filling is
idempotent), refused for a tensor value, as ATen does. The functional forms fill a new tensor in self's layout;
the out= forms want out of self's dtype and resize it to self's shape.
"""

import torch

from gems.checks import check_out, checked_scalar
from gems.codegen.pointwise_checks import is_dense
from gems.dtypes import ALL
from gems.ops.copy.shared import (
    check_copy,
    check_dtypes,
    check_layouts,
    copy_perf,
    copy_samples,
    fill_strided,
    launch_copy,
)
from gems.ops.creation.fill import fill_dense
from gems.runtime.registration import Fallback
from gems.spec import OpSpec


def fill_value(self, value):
    """fill_.Scalar's work, shared by zero_: ``value`` checked against self's dtype, then written."""
    check_dtypes(self)
    if self.is_neg():
        raise Fallback("a fill through a negative view (the value is stored negated)")
    converted = checked_scalar(value, self.dtype)
    return fill_dense(self, converted) if is_dense(self) else fill_strided(self, converted)


def fill__tensor(self, value):
    if value.dim() != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value.dim()} "
                           "dimensions.")
    if value.device != self.device:  # unreached on the interpreter: one device
        return fill_value(self, value.item())  # a CPU number beside a device tensor, as ATen reads it
    check_copy(self, value)
    if self.untyped_storage().data_ptr() == value.untyped_storage().data_ptr():
        value = launch_copy(torch.empty_like(value), value)  # a view of self: read before it is overwritten
    check_layouts(self, value)
    return launch_copy(self, value)


def fill_scalar(self, value):
    return fill_value(torch.empty_like(self), value)


def fill_tensor(self, value):
    return fill__tensor(torch.empty_like(self), value)


def _resized_out(self, out):
    check_out(out, self)
    if out.shape != self.shape:
        out.resize_(self.shape)
    return out


def fill_scalar_out(self, value, *, out):
    return fill_value(_resized_out(self, out), value)


def fill_tensor_out(self, value, *, out):
    return fill__tensor(_resized_out(self, out), value)


SPECS = [
    OpSpec(
        name="fill", family="creation",
        impls={"fill_.Scalar": fill_value, "fill_.Tensor": fill__tensor, "fill.Scalar": fill_scalar,
               "fill.Tensor": fill_tensor, "fill.Scalar_out": fill_scalar_out, "fill.Tensor_out": fill_tensor_out},
        call=torch.Tensor.fill_, samples=copy_samples("fill_samples"), dtypes=ALL, tolerance="exact",
        perf=copy_perf("fill_perf", shapes="pointwise"),
    ),
]
