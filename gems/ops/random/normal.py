"""normal: new tensors of N(mean, std^2) draws (the distribution kernel of distributions.py).

- ``normal.Tensor_float`` (mean a tensor, std a number), ``normal.float_Tensor``, ``normal.Tensor_Tensor``
  (shapes broadcast): contiguous, in the dtype of the tensor mean (of std for float_Tensor); a tensor
  mean or std is read per element;
- ``normal.float_float``: ``size`` of ``dtype`` (the default dtype if None);
- their ``_out`` forms, and ``normal.out`` (self's shape into out).
ATen checks std >= 0 (NaN fails): a number on the host, a tensor by reading its minimum back (gems: one
small kernel and one read back), before drawing.
"""

import torch
import triton.language as tl  # noqa: F401 (the interpreter runs a module's kernels only when tl is in it)

from gems.dtypes import FLOATS
from gems.ops.creation.fill import check_options
from gems.ops.random.distributions import NORMAL, draw
from gems.ops.random.normal_ import check_floating, check_std, normal_
from gems.ops.random.philox import SEED_DRAW, any_outside, random_samples
from gems.spec import OpSpec


def _check_std_tensor(std: torch.Tensor) -> None:
    check_floating(std.dtype)
    if any_outside(std, 0.0, float("inf")):
        raise RuntimeError("normal expects all elements of std >= 0.0")


def _drawn(out, mean, std, generator):
    """out (resized to the broadcast shape) = mean + std * z; mean and std numbers or tensors."""
    tensors = [t for t in (mean, std) if isinstance(t, torch.Tensor)]
    shape = torch.broadcast_shapes(*(t.shape for t in tensors))
    check_floating(out.dtype)
    if out.shape != shape:
        out.resize_(shape)
    mean_t, std_t = (t if isinstance(t, torch.Tensor) else None for t in (mean, std))
    return draw(out, NORMAL, generator, 0.0 if mean_t is not None else mean, 1.0 if std_t is not None else std,
                a_tensor=mean_t, b_tensor=std_t)


def normal_tensor_float_out(mean, std=1.0, *, generator=None, out):
    check_std(std)
    check_floating(mean.dtype)
    # ATen broadcasts the mean with a tensor of out's shape (an out= that does not broadcast is refused).
    torch.broadcast_shapes(mean.shape, out.shape)
    return _drawn(out, mean, std, generator)


def normal_tensor_float(mean, std=1.0, *, generator=None):
    return normal_tensor_float_out(mean, std, generator=generator, out=torch.empty_like(
        mean, memory_format=torch.contiguous_format))


def normal_float_tensor_out(mean, std, *, generator=None, out):
    _check_std_tensor(std)
    return _drawn(out, mean, std, generator)


def normal_float_tensor(mean, std, *, generator=None):
    return normal_float_tensor_out(mean, std, generator=generator, out=torch.empty_like(
        std, memory_format=torch.contiguous_format))


def normal_tensor_tensor_out(mean, std, *, generator=None, out):
    check_floating(mean.dtype)
    _check_std_tensor(std)
    return _drawn(out, mean, std, generator)


def normal_tensor_tensor(mean, std, *, generator=None):
    shape = torch.broadcast_shapes(mean.shape, std.shape)
    return normal_tensor_tensor_out(mean, std, generator=generator,
                                    out=torch.empty(shape, dtype=mean.dtype, device=mean.device))


def normal_float_float(mean, std, size, *, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    dtype = torch.get_default_dtype() if dtype is None else dtype
    check_options(dtype, layout, device, pin_memory)
    return normal_(torch.empty(size, dtype=dtype, device=device), mean, std, generator=generator)


def normal_float_float_out(mean, std, size, *, generator=None, out):
    out.resize_(size)
    return normal_(out, mean, std, generator=generator)


def normal_out(self, mean=0.0, std=1.0, *, generator=None, out):
    if out.dtype != self.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {self.dtype}, but got {out.dtype} instead")
    out.resize_(self.shape)
    return normal_(out, mean, std, generator=generator)


SPECS = [
    OpSpec(
        name="normal", family="random",
        impls={"normal.Tensor_float": normal_tensor_float, "normal.Tensor_float_out": normal_tensor_float_out,
               "normal.float_Tensor": normal_float_tensor, "normal.float_Tensor_out": normal_float_tensor_out,
               "normal.Tensor_Tensor": normal_tensor_tensor, "normal.Tensor_Tensor_out": normal_tensor_tensor_out,
               "normal.float_float": normal_float_float, "normal.float_float_out": normal_float_float_out,
               "normal.out": normal_out},
        call=torch.normal, samples=random_samples("normal_samples"), dtypes=FLOATS,
        aten_decisions=SEED_DRAW,
    ),
]
