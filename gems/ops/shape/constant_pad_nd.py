"""constant_pad_nd (and .out): the last len(pad) / 2 dims padded with ``value`` ((left, right) of the last dim
first); negative pads crop. One launch of the family's copy kernel (PAD mode: an output element with no source
takes the value); the result in the input's suggested memory format, as ATen's. ``pad`` (torch.nn.functional.pad)
is CompositeImplicitAutograd: its constant mode runs this, its reflect and replicate modes the
reflection/replication paddings.
"""

import torch

from gems.checks import checked_scalar
from gems.dtypes import ALL
from gems.ops.shape.remap import PAD, dims_of, remap
from gems.ops.shape.shared import checked_dtype, empty_suggested, prepared_out, shape_perf, shape_samples
from gems.spec import OpSpec


def _padded(x, pad):
    """(output shape, dim -> (PAD, lo)), checked as ATen checks them."""
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    if len(pad) // 2 > x.dim():
        raise RuntimeError(f"Length of pad should be no more than twice the number of dimensions of the input. Pad "
                           f"length is {len(pad)}while the input has {x.dim()}dimensions.")
    shape, modes = list(x.shape), {}
    for k in range(len(pad) // 2):
        d = x.dim() - 1 - k
        lo, hi = pad[2 * k], pad[2 * k + 1]
        if shape[d] + lo + hi < 0:
            raise RuntimeError(f"The input size {shape[d]}, plus negative padding {lo} and {hi} resulted in a negative "
                               f"output size, which is invalid. Check dimension {d} of your input.")
        shape[d] += lo + hi
        modes[d] = (PAD, lo)
    return shape, modes


def constant_pad_nd(self, pad, value=0):
    shape, modes = _padded(self, pad)
    checked_dtype(self)
    value = checked_scalar(value, self.dtype)
    out = empty_suggested(self, shape)
    return remap(self, out, dims_of(self, out, modes), value)


def constant_pad_nd_out(self, pad, value=0, *, out):
    shape, modes = _padded(self, pad)
    checked_dtype(self)
    value = checked_scalar(value, self.dtype)
    prepared_out(out, self, shape)
    return remap(self, out, dims_of(self, out, modes), value)


SPECS = [
    OpSpec(
        name="constant_pad_nd", family="tensor",
        impls={"constant_pad_nd": constant_pad_nd, "constant_pad_nd.out": constant_pad_nd_out},
        call=torch.constant_pad_nd, samples=shape_samples("constant_pad_nd_samples"), dtypes=ALL,
        tolerance="exact", perf=shape_perf("constant-pad")),
]
