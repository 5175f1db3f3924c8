"""What the factories share: one kernel that writes a value over a dense block of memory (a strided
out= tensor is filled through the pointwise generator, which walks any layout), the checks of their
``dtype=, layout=, device=, pin_memory=`` options, and the references to the family's sample and perf
generators (imported when conformance or perf first calls them).

The fill value goes through ATen's checked conversion (gems.checks.checked_scalar): ``full((2,), 300,
dtype=torch.int8)`` raises, a float is truncated for integer dtypes, anything is True for bool.
"""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import SUPPORTED_DTYPES, PointwiseOp, float64_bits, pointwise_config
from gems.codegen.pointwise_checks import is_dense
from gems.runtime import selection
from gems.runtime.launch import Launcher, cdiv
from gems.runtime.registration import Fallback
from gems.spec import lazy, lazy_perf

INT32_LIMIT = 2**31 - 1  # past it, program offsets are computed in int64


@triton.jit
def _fill_kernel(out_ptr, value, n_elements, VALUE_BITS: tl.constexpr, INT64: tl.constexpr, BLOCK: tl.constexpr):
    """out[i] = value for i < n_elements (a dense block); a float64 value arrives as its bits."""
    pid = tl.program_id(0)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        pid = pid.to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    if VALUE_BITS:
        v = tl.cast(tl.cast(value, tl.int64), tl.float64, bitcast=True)
    else:
        v = value
    vals = tl.full([BLOCK], v, out_ptr.dtype.element_ty)
    tl.store(out_ptr + offs, vals, mask=offs < n_elements)


@triton.jit
def _fill_strided(x, value):
    return tl.where(x == x, value, value)  # the value at every position of x (NaN positions too)


_fill = Launcher(_fill_kernel)
# A strided out= tensor is filled through the pointwise generator, which walks any layout.
_fill_strided_op = PointwiseOp("fill_strided", _fill_strided, operands=2)


_device_type = []


def _vendor_device_type() -> str:
    if not _device_type:
        _device_type.append(torch.device(selection.current().device).type)
    return _device_type[0]


def check_options(dtype, layout, device, pin_memory):
    if layout not in (None, torch.strided):
        raise Fallback(f"layout {layout} is not strided")
    if pin_memory:
        raise Fallback("pin_memory=True")
    if dtype not in SUPPORTED_DTYPES:
        raise Fallback(f"dtype {dtype} not handled by gems fill kernels")
    if device is not None and torch.device(device).type != _vendor_device_type():
        raise Fallback(f"device {device} is not the vendor's device")


def fill_dense(out: torch.Tensor, value) -> torch.Tensor:
    """Write ``value`` (already converted by :func:`checked_scalar`) into every element of ``out``."""
    numel = out.numel()
    if numel == 0:
        return out
    if not is_dense(out):
        _fill_strided_op(out, value, out=out, inplace=True)
        return out
    bits = out.dtype is torch.float64 and type(value) is float
    if type(value) is bool:
        value = int(value)  # the interpreter cannot take a bool argument
    block, num_warps = pointwise_config(numel, out.dtype.itemsize)
    # A dense tensor with positive strides covers exactly numel elements from its first one.
    _fill((cdiv(numel, block),), out, float64_bits(value) if bits else value, numel, bits, numel > INT32_LIMIT,
          block, num_warps=num_warps)
    return out


def infer_dtype(value) -> torch.dtype:
    if isinstance(value, bool):
        return torch.bool
    if isinstance(value, int):
        return torch.int64
    if isinstance(value, complex):
        raise Fallback("complex fill value")
    return torch.get_default_dtype()


# --------------------------------------------------------------------------- lazy generator references


def factory_samples(make_calls):
    """gems.testing.samples_extra.creation_samples(make_calls), made on first use."""
    return lazy("gems.testing.samples_extra", "creation_samples", make_calls)


def sized_factory_samples(factory, overload, value_args=()):
    """The samples of ``factory(size, *value_args, dtype=, device=)`` and its out= form."""
    return factory_samples(lazy("gems.testing.samples_extra", "factory_calls", factory, overload, value_args))


def like_samples(call, overload, extra_args=(), fill_checks=()):
    """gems.testing.samples_extra.like_samples(...), made on first use."""
    return lazy("gems.testing.samples_extra", "like_samples", call, overload, extra_args, fill_checks)


def factory_perf(call):
    """Perf inputs of a factory ``call(like, shape)``: bytes = the output written."""
    return lazy_perf("gems.testing.samples_extra", "creation_perf", call, shapes="pointwise")


def sized_factory_perf(factory, *value_args):
    return factory_perf(lambda like, shape: factory(shape, *value_args, dtype=like.dtype, device=like.device))
