"""What the upsampling operators share: ATen's checks of their sizes, their overloads (forward with .out, backward
with .grad_input) and their declarations. Each operator's file names its record (``Upsampling``); the kernels
are in resample.py (nearest, linear, cubic) and antialias.py (the _aa operators).

The ``.vec`` overloads (output_size or scale_factors, what F.interpolate calls) are CompositeImplicitAutograd:
they compute the output size and call these, so they stay unregistered and the forward samples reach them
through F.interpolate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from gems.dtypes import ATEN_NAMES, FLOATS, LOW_PRECISION_FLOATS
from gems.ops.pooling.antialias import antialias, antialias_backward
from gems.ops.pooling.resample import CUBIC, LINEAR, NEAREST, NEAREST_EXACT, resample, resample_backward
from gems.ops.pooling.shared import checked_float, pooling_perf, pooling_samples, result
from gems.ops.shape.shared import suggest_memory_format
from gems.spec import OpSpec

_MODES = {"nearest": NEAREST, "nearest-exact": NEAREST_EXACT, "linear": LINEAR, "cubic": CUBIC}
_AXES = ("D", "H", "W")


@dataclass(frozen=True)
class Upsampling:
    """One upsampling operator: its ATen name, spatial dims, mode ("nearest", "nearest-exact", "linear",
    "cubic", "aa-linear", "aa-cubic") and whether its backward's grad_input takes grad_output's memory format
    (ATen's meta functions differ: nearest2d, bilinear2d and trilinear3d do, bicubic2d and nearest3d don't)."""

    aten: str
    spatial: int
    mode: str
    backward_keeps_layout: bool = False

    @property
    def name(self) -> str:
        return self.aten.lstrip("_")

    @property
    def aligned(self) -> bool:
        """Whether the schema has align_corners (every mode but the nearest ones)."""
        return not self.mode.startswith("nearest")

    def split(self, rest) -> tuple[bool, tuple]:
        """(align_corners, scales) from the schema's arguments after the sizes."""
        align, rest = (bool(rest[0]), rest[1:]) if self.aligned else (False, rest)
        return align, tuple(rest) + (None,) * (self.spatial - len(rest))


def _sizes_text(sizes) -> str:
    return ", ".join(f"{axis}: {n}" for axis, n in zip(_AXES[3 - len(sizes):], sizes))


def output_shape(up: Upsampling, input_size, output_size) -> list:
    """ATen's upsample_{1,2,3}d_common_check: the full output size, or its RuntimeError."""
    dims = up.spatial + 2
    if len(output_size) != up.spatial:
        raise RuntimeError(f"It is expected output_size equals to {up.spatial}, but got size {len(output_size)}")
    if len(input_size) != dims:
        raise RuntimeError(f"It is expected input_size equals to {dims}, but got size {len(input_size)}")
    spatial_in = list(input_size[2:])
    if any(n <= 0 for n in (*spatial_in, *output_size)):
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input ({_sizes_text(spatial_in)})"
                           f" output ({_sizes_text(output_size)})")
    return [input_size[0], input_size[1], *output_size]


def check_dtype(up: Upsampling, t: torch.Tensor, kernel: str) -> None:
    """ATen's dtypes: floats (and uint8 for the nearest forwards); ATen's CPU kernels of the _aa operators refuse
    fp16 and bf16 (its CUDA kernels compute them), so gems refuses them on CPU tensors too."""
    checked_float(t, up.aten, also=(torch.uint8,) if up.mode.startswith("nearest") and "backward" not in kernel else ())
    if up.mode.startswith("aa-") and t.dtype in LOW_PRECISION_FLOATS and t.device.type == "cpu":
        raise NotImplementedError(f'"{kernel}" not implemented for \'{ATEN_NAMES[t.dtype]}\'')


def upsample(up: Upsampling, x: torch.Tensor, output_size, rest, out=None) -> torch.Tensor:
    shape = output_shape(up, list(x.shape), list(output_size))
    if x.numel() == 0 and math.prod(x.shape[1:]) == 0:
        raise RuntimeError(f"Non-empty {up.spatial + 2}D data tensor expected but got a tensor with sizes "
                           f"{list(x.shape)}")
    check_dtype(up, x, "compute_index_ranges_weights")
    align, scales = up.split(rest)
    y = result(x, shape, suggest_memory_format(x), out=out)
    if up.mode.startswith("aa-"):
        return antialias(x, y, up.mode == "aa-cubic", align, scales)
    return resample(x, y, up.spatial, _MODES[up.mode], align, scales)


def upsample_backward(up: Upsampling, grad_output: torch.Tensor, output_size, input_size, rest,
                      grad_input=None) -> torch.Tensor:
    shape = output_shape(up, list(input_size), list(output_size))
    dims = up.spatial + 2
    if grad_output.dim() != dims:
        raise RuntimeError(f"Expected grad_output to be a tensor of dimension {dims} but got: dimension "
                           f"{grad_output.dim()}")
    for d in range(dims):
        if grad_output.shape[d] != shape[d]:
            raise RuntimeError(f"Expected grad_output to have the same shape as output; output.size({d}) = "
                               f"{shape[d]} but got grad_output.size({d}) = {grad_output.shape[d]}")
    check_dtype(up, grad_output, f"{up.name}_backward_cpu")
    align, scales = up.split(rest)
    fmt = suggest_memory_format(grad_output) if up.backward_keeps_layout else torch.contiguous_format
    gi = result(grad_output, input_size, fmt, out=grad_input)
    if up.mode.startswith("aa-"):
        return antialias_backward(grad_output, gi, up.mode == "aa-cubic", align, scales)
    return resample_backward(grad_output, gi, up.spatial, _MODES[up.mode], align, scales)


def _perf_kind(up: Upsampling) -> tuple[str, str]:
    """(perf input kind, perf/shapes.yaml key) of up's forward."""
    if up.mode.startswith("aa-"):
        return up.aten, "upsample_aa"
    return up.aten, "upsample_nearest" if up.mode.startswith("nearest") else "upsample_interp"


def forward_spec(up: Upsampling) -> OpSpec:
    """The declaration of up's forward: the functional overload and .out."""

    def forward(self, output_size, *rest):
        return upsample(up, self, output_size, rest)

    def forward_out(self, output_size, *rest, out):
        return upsample(up, self, output_size, rest, out=out)

    dtypes = FLOATS + (torch.uint8,) if up.mode.startswith("nearest") else FLOATS
    kind, key = _perf_kind(up)
    known_failures = {} if not up.mode.startswith("aa-") else {
        ("nvidia", "float32", "empty-batch"): "ATen's CUDA anti-aliased kernel fails to launch for an empty batch "
                                              "(CUDA error: invalid argument, H200, torch 2.11); gems returns the "
                                              "empty result"}
    return OpSpec(name=up.name, family="pooling", impls={up.aten: forward, f"{up.aten}.out": forward_out},
                  call=getattr(torch.ops.aten, up.aten).default, dtypes=dtypes, known_failures=known_failures,
                  samples=pooling_samples("upsample_samples", up), perf=pooling_perf(kind, key))


def backward_spec(up: Upsampling) -> OpSpec:
    """The declaration of up's backward: the functional overload and .grad_input."""

    def backward(grad_output, output_size, input_size, *rest):
        return upsample_backward(up, grad_output, output_size, input_size, rest)

    def backward_out(grad_output, output_size, input_size, *rest, grad_input):
        return upsample_backward(up, grad_output, output_size, input_size, rest, grad_input=grad_input)

    aten = f"{up.aten}_backward"
    kind, key = _perf_kind(up)
    # reduction: each grad_input element sums the gradients of the outputs that read it
    return OpSpec(name=f"{up.name}_backward", family="pooling",
                  impls={aten: backward, f"{aten}.grad_input": backward_out},
                  call=getattr(torch.ops.aten, aten).default, dtypes=FLOATS, tolerance="reduction",
                  samples=pooling_samples("upsample_backward_samples", up),
                  perf=pooling_perf(f"{kind}_backward", key))
