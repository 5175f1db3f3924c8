"""roll (and roll.out): elements shifted along ``dims`` with wrap-around; out[..., o, ...] = x[..., (o - shift) mod n,
...]. Several dims (even one dim named twice: the shifts add) in one launch of the family's copy kernel (WRAP
mode). With no dims the tensor rolls as if flattened: a contiguous input is viewed as one dim, any other is first
copied contiguous (ATen's ``contiguous().view(-1)``), a second launch.
"""

import torch

from gems.dtypes import ALL
from gems.ops.shape.remap import WRAP, dense_copy, dims_of, remap
from gems.ops.shape.shared import checked_dtype, empty_suggested, prepared_out, shape_perf, shape_samples
from gems.spec import OpSpec


def _shifts(x, shifts, dims) -> dict:
    """dim -> (WRAP, shift in [0, n)), checked as ATen's roll checks."""
    if len(shifts) == 0:
        raise RuntimeError("`shifts` required")
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    total = {}
    for shift, dim in zip(shifts, dims):
        if x.dim() == 0:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        if not -x.dim() <= dim < x.dim():
            raise IndexError(f"Dimension out of range (expected to be in range of [{-x.dim()}, {x.dim() - 1}], "
                             f"but got {dim})")
        dim %= x.dim()
        total[dim] = total.get(dim, 0) + shift
    return {d: (WRAP, s % x.shape[d]) for d, s in total.items() if x.shape[d]}


def _roll_into(x, shifts, dims, out):
    if len(dims) == 0 and len(shifts) == 1:
        if not x.is_contiguous():
            x = dense_copy(x)
        flat_x, flat_out = x.view(-1), out.view(-1)
        remap(flat_x, flat_out, dims_of(flat_x, flat_out, _shifts(flat_x, shifts, (0,))))
        return out
    return remap(x, out, dims_of(x, out, _shifts(x, shifts, dims)))


def roll(self, shifts, dims=()):
    checked_dtype(self)
    if len(dims) == 0 and len(shifts) == 1:
        out = torch.empty(self.shape, dtype=self.dtype, device=self.device)  # viewed flat
    else:
        _shifts(self, shifts, dims)
        out = empty_suggested(self, self.shape)
    return _roll_into(self, shifts, dims, out)


def roll_out(self, shifts, dims=(), *, out):
    checked_dtype(self)
    if not (len(dims) == 0 and len(shifts) == 1):
        _shifts(self, shifts, dims)
    prepared_out(out, self, self.shape)
    if len(dims) == 0 and not out.is_contiguous():
        rolled = _roll_into(self, shifts, dims, torch.empty(self.shape, dtype=self.dtype, device=self.device))
        return remap(rolled, out, dims_of(rolled, out))
    return _roll_into(self, shifts, dims, out)


SPECS = [
    OpSpec(
        name="roll", family="tensor", impls={"roll": roll, "roll.out": roll_out}, call=torch.roll,
        samples=shape_samples("roll_samples"), dtypes=ALL, tolerance="exact", perf=shape_perf("roll")),
]
