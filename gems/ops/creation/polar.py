"""polar (and polar.out): the complex tensor ``abs * (cos(angle) + i sin(angle))`` of two real tensors of one
floating dtype (float32 -> complex64, float64 -> complex128), broadcast together.

gems kernels hold no complex dtype: the result is written through a real view of it, real and imaginary parts
interleaved. Inputs that are not contiguous tensors of the result's shape are made so
first; an out= that is not contiguous receives the values through a contiguous buffer. cos and sin are
libdevice's (the interpreter evaluates them with torch's CPU functions, as ATen's).
"""

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from gems.codegen.pointwise import pointwise_config
from gems.dtypes import ATEN_NAMES
from gems.ops.creation.fill import INT32_LIMIT
from gems.runtime.launch import Launcher, cdiv
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, lazy, lazy_perf

_COMPLEX = {torch.float32: torch.complex64, torch.float64: torch.complex128}
_REAL = {complex_: real for real, complex_ in _COMPLEX.items()}
_COMPLEX_NAMES = {torch.complex64: "ComplexFloat", torch.complex128: "ComplexDouble"}


@triton.jit
def _polar_kernel(abs_ptr, angle_ptr, out_ptr, n_elements, INT64: tl.constexpr, BLOCK: tl.constexpr):
    """out[2i] = abs[i] cos(angle[i]), out[2i + 1] = abs[i] sin(angle[i]): the two parts interleaved in registers
    (tl.join) and stored as one contiguous run of 2 * BLOCK values. Two stores of stride 2, one per part, each
    wrote half of every sector: fp32 polar was 0.69x ATen at 64M on an H200."""
    pid = tl.program_id(0)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        pid = pid.to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    magnitude = tl.load(abs_ptr + offs, mask=mask)
    angle = tl.load(angle_ptr + offs, mask=mask)
    parts = tl.reshape(tl.join(magnitude * libdevice.cos(angle), magnitude * libdevice.sin(angle)), [2 * BLOCK])
    out_offs = pid * (2 * BLOCK) + tl.arange(0, 2 * BLOCK)
    tl.store(out_ptr + out_offs, parts, mask=out_offs < 2 * n_elements)


_polar = Launcher(_polar_kernel)


def _check(abs, angle):
    if not (abs.is_floating_point() and angle.is_floating_point()):
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{ATEN_NAMES.get(abs.dtype, abs.dtype)} and {ATEN_NAMES.get(angle.dtype, angle.dtype)}")
    if angle.dtype != abs.dtype:
        raise RuntimeError(f"Expected object of scalar type {ATEN_NAMES.get(abs.dtype, abs.dtype)} but got scalar "
                           f"type {ATEN_NAMES.get(angle.dtype, angle.dtype)} for second argument")
    if abs.dtype not in _COMPLEX:
        raise Fallback(f"polar of {abs.dtype} (ATen decides whether it computes it)")
    if angle.device != abs.device:  # unreached on the interpreter: one device
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                           f"{abs.device} and {angle.device}!")
    return torch.broadcast_shapes(abs.shape, angle.shape)


def real_view(t):
    """A contiguous complex tensor's real and imaginary parts, interleaved, as one flat real tensor (view.dtype:
    every device has it, unlike view_as_real)."""
    return t.reshape(-1).view(_REAL[t.dtype])


def _full(t, shape):
    return t if t.shape == shape and t.is_contiguous() else t.expand(shape).contiguous()


def _polar_into(out, abs, angle, shape):
    numel = out.numel()
    if numel == 0:
        return out
    target = out if out.is_contiguous() else torch.empty(shape, dtype=out.dtype, device=out.device)
    block, num_warps = pointwise_config(numel, abs.element_size())
    _polar((cdiv(numel, block),), _full(abs, shape), _full(angle, shape), real_view(target), numel,
           2 * numel > INT32_LIMIT, block, num_warps=num_warps)
    if target is not out:
        out.copy_(target)
    return out


def polar(abs, angle):
    shape = _check(abs, angle)
    return _polar_into(torch.empty(shape, dtype=_COMPLEX[abs.dtype], device=abs.device), abs, angle, shape)


def polar_out(abs, angle, *, out):
    shape = _check(abs, angle)
    want = _COMPLEX[abs.dtype]
    if out.dtype != want:
        raise RuntimeError(f"Expected object of scalar type {_COMPLEX_NAMES[want]} but got scalar type "
                           f"{_COMPLEX_NAMES.get(out.dtype, ATEN_NAMES.get(out.dtype, out.dtype))} for argument 'out'")
    if out.shape != shape:
        out.resize_(shape)
    return _polar_into(out, abs, angle, shape)


SPECS = [
    OpSpec(
        name="polar", family="creation", impls={"polar": polar, "polar.out": polar_out}, call=torch.polar,
        samples=lazy("gems.testing.samples_copy", "polar_samples"), dtypes=(torch.float32, torch.float64),
        perf=lazy_perf("gems.testing.samples_copy", "polar_perf", shapes="pointwise"),
    ),
]
