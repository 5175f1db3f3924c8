"""A recorded launch as the CUDA primitive's parameters (dispatch.cpp ``launch_cuda``): how triton 3.6's launcher
packs a compiled kernel's arguments, and which launch features the native primitive does not set."""

from __future__ import annotations

import struct

import torch
from triton.runtime.jit import JITFunction

from gems.native.refusals import NotRecordable
from gems.runtime import registration

# Integer and float kernel parameters as triton 3.6's launcher packs them (backends/nvidia/driver.py).
_FORMATS = {"i1": "b", "i8": "b", "u1": "B", "u8": "B", "i16": "h", "u16": "H", "i32": "i", "u32": "I",
            "i64": "q", "u64": "Q", "fp16": "e", "fp32": "f", "f32": "f", "fp64": "d"}
_SCRATCH_ALIGN = 512  # the alignment of every block of torch's CUDA caching allocator


def _jit_function(launcher) -> JITFunction:
    fn = launcher.kernel
    while not isinstance(fn, JITFunction):
        fn = fn.fn
    return fn


def cuda_launch(launcher, compiled, grid, args, argspec):
    """((CUfunction, grid x, y, z, block, shared, params, patches, scratch bytes per program),
    {argument position: where it went})."""
    meta = getattr(compiled, "metadata", None)
    if meta is None or not getattr(compiled, "function", None):
        raise NotRecordable("no compiled kernel handle")
    if (getattr(meta, "num_ctas", 1) != 1 or getattr(meta, "launch_cooperative_grid", False)
            or getattr(meta, "launch_pdl", False) or getattr(meta, "profile_scratch_size", 0)
            or getattr(meta, "tensordesc_meta", None)):
        raise NotRecordable("the kernel needs launch features the native primitive does not set")
    # Global scratch (tensor descriptors a kernel builds itself): the C++ launch allocates it per replay from
    # the caching allocator, whose blocks start on 512-byte boundaries.
    scratch = getattr(meta, "global_scratch_size", 0)
    if scratch and getattr(meta, "global_scratch_align", 1) > _SCRATCH_ALIGN:
        raise NotRecordable(f"the kernel's global scratch needs {meta.global_scratch_align}-byte alignment")
    fn = _jit_function(launcher)
    position = {name: p for p, name in enumerate(fn.arg_names)}
    params, patches, where = [], [], {}
    for name, ty in compiled.src.signature.items():
        name = fn.arg_names[name] if isinstance(name, int) else name
        if ty == "constexpr":
            continue
        if name not in position or position[name] >= len(args) or not isinstance(ty, str):
            raise NotRecordable(f"kernel parameter {name} ({ty}) is not a plain argument")
        p = position[name]
        value, spec = args[p], argspec[p]
        if ty.startswith("*") and spec[0] == "c" and isinstance(value, torch.Tensor):
            params.append(value.data_ptr())  # a never-read placeholder (_arg), alive as long as the plan
        elif ty.startswith("*"):
            if spec[0] != "t":
                raise NotRecordable(f"pointer parameter {name} is not a tensor")
            where[p] = ("patch", len(patches))
            patches.append((len(params), spec[1], spec[2], spec[3]))
            params.append(0)
        elif ty == "bf16":
            params.append(_bf16_bits(float(value)))
        elif ty in _FORMATS:
            raw = struct.pack("<" + _FORMATS[ty], value)
            where[p] = ("param", len(params), len(raw))
            params.append(int.from_bytes(raw.ljust(8, b"\0"), "little", signed=True))
        else:
            raise NotRecordable(f"kernel parameter type {ty}")
    return (compiled.function, *grid, 32 * meta.num_warps, meta.shared, params, patches, scratch), where


def _bf16_bits(value: float) -> int:
    """The 16 bits of ATen's bfloat16 for ``value`` (ATen's own cast, not gems': this is no call of the user's)."""
    with registration.aten_only():
        return torch.tensor(value, dtype=torch.bfloat16).view(torch.int16).item() & 0xFFFF
