"""What the pooling family's operators share: the (N, C, D, H, W) view of an image of 1-3 spatial dims, the
tile every kernel walks, results in ATen's memory format, and the references to the family's samples and perf
inputs (gems/testing/samples_pooling.py, imported on first use).

Tiles: a kernel writes one tensor (the result, or grad_input) in 2-d tiles whose columns are that tensor's
innermost dim, so that loads and stores along a tile row are consecutive addresses: W for a contiguous (NCHW)
tensor, the rows then being (n, c, d, h); C for a channels-last one, the rows being (n, d, h, w) pixels. Each
coordinate comes back as a [BLOCK_R, 1] or [1, BLOCK_C] tensor, so per-row work (source positions, weights)
costs BLOCK_R, per-column work BLOCK_C, and only loads, stores and the arithmetic on values cost the tile.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from gems.checks import check_out
from gems.dtypes import ATEN_NAMES, FLOATS
from gems.ops.shape.shared import suggest_memory_format
from gems.runtime import selection
from gems.runtime.launch import cdiv
from gems.runtime.registration import Fallback
from gems.spec import lazy, lazy_perf

INT32_LIMIT = 2**31 - 1  # past it, offsets are computed in int64
_tile_rules = {}
_tile_configs = {}  # tile_config's answers: the rules depend only on their arguments
# The accumulation dtype per input dtype: fp16/bf16/fp32 compute in fp32, fp64 in fp64 (ATen's acc_type).
ACC = {torch.float16: tl.float32, torch.bfloat16: tl.float32, torch.float32: tl.float32, torch.float64: tl.float64}


@triton.jit
def image_tile(C, D, H, W, n_rows, n_cols, tiles_c, CL: tl.constexpr, INT64: tl.constexpr,
               BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    """(n, c, d, h, w, mask) of program_id(0)'s tile of an (N, C, D, H, W) tensor: columns are w (CL false)
    or c (CL true), rows the other coordinates, row-major; each coordinate broadcastable to the tile."""
    pid = tl.program_id(0)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        pid = pid.to(tl.int64)
    rows = (pid // tiles_c) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = (pid % tiles_c) * BLOCK_C + tl.arange(0, BLOCK_C)
    mask = (rows < n_rows)[:, None] & (cols < n_cols)[None, :]
    if CL:
        w = (rows % W)[:, None]
        t = rows // W
        h = (t % H)[:, None]
        t = t // H
        d = (t % D)[:, None]
        n = (t // D)[:, None]
        c = cols[None, :]
    else:
        w = cols[None, :]
        h = (rows % H)[:, None]
        t = rows // H
        d = (t % D)[:, None]
        t = t // D
        c = (t % C)[:, None]
        n = (t // C)[:, None]
    return n, c, d, h, w, mask


@triton.jit
def negative_zeros(BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr, ACC_T: tl.constexpr):
    """A [BLOCK_R, BLOCK_C] tile of -0.0, the identity of a float sum (a sum started from it keeps the sign of a
    first term -0.0, as a sum written without a start does). Triton turns a literal -0.0 into +0.0 (its constants
    equal to 0 become the null value), so the tile is made from the bits."""
    if ACC_T == tl.float64:
        zeros = tl.full([BLOCK_R, BLOCK_C], -9223372036854775808, tl.int64).to(tl.float64, bitcast=True)
    else:
        zeros = tl.full([BLOCK_R, BLOCK_C], -2147483648, tl.int32).to(tl.float32, bitcast=True)
    return zeros


def five_d(t: torch.Tensor, spatial: int) -> tuple[list, list]:
    """t's (sizes, strides) as (N, C, D, H, W), t having ``spatial`` spatial dims after an optional batch dim
    and a channel dim: the missing ones are size 1 (stride 0)."""
    lead = 2 + spatial - t.dim()  # 1 for an unbatched tensor
    sizes = [1] * lead + list(t.shape)
    strides = [0] * lead + list(t.stride())
    sizes[2:2] = [1] * (3 - spatial)
    strides[2:2] = [0] * (3 - spatial)
    return sizes, strides


def channels_last(t: torch.Tensor) -> bool:
    """Whether kernels walk t's channels as tile columns (its suggested memory format is channels-last)."""
    return suggest_memory_format(t) is not torch.contiguous_format


def needs_int64(*tensors) -> bool:
    """Whether an offset into one of these tensors (or a coordinate product) can pass int32."""
    return any(t.numel() > INT32_LIMIT or sum((n - 1) * abs(s) for n, s in zip(t.shape, t.stride()) if n) >
               INT32_LIMIT for t in tensors)


def tile_config(rows: int, cols: int, itemsize: int, cl: bool) -> tuple[int, int, int, int]:
    """(BLOCK_R, BLOCK_C, column tiles, num_warps) for a tile walk of rows x cols elements (cl: the columns are
    channels), from the vendor's rules (heuristics key "pooling"), memoized."""
    key = (rows, cols, itemsize, cl)
    config = _tile_configs.get(key)
    if config is None:
        rules = _tile_rules.get("pooling")
        if rules is None:
            rules = _tile_rules["pooling"] = selection.current().heuristics("pooling")
        args = {"rows": rows, "cols": cols, "itemsize": itemsize, "channels_last": cl}
        for name, rule in rules.items():  # in order: each rule sees the values chosen before it
            args[name] = rule(dict(args))
        if len(_tile_configs) > 4096:
            _tile_configs.clear()
        config = _tile_configs[key] = (args["BLOCK_R"], args["BLOCK_C"], cdiv(cols, args["BLOCK_C"]),
                                       args["num_warps"])
    return config


def tile_walk(t: torch.Tensor, sizes) -> tuple[bool, int, int]:
    """(CL, rows, columns) of a walk over t, whose (N, C, D, H, W) sizes are ``sizes``."""
    n, c, d, h, w = sizes
    if channels_last(t):
        return True, n * d * h * w, c
    return False, n * c * d * h, w


def checked_float(x: torch.Tensor, name: str, also=()) -> None:
    """ATen refuses bool; gems computes the floating dtypes (and ``also``): anything else goes to ATen, which
    computes it (the CPU's integer kernels) or refuses it (CUDA's)."""
    if x.dtype is torch.bool:
        raise NotImplementedError(f'"{name}" not implemented for \'Bool\'')
    if x.dtype not in FLOATS and x.dtype not in also:
        raise Fallback(f"dtype {x.dtype} not handled by gems pooling kernels")


def check_same_dtype(grad: torch.Tensor, x: torch.Tensor, what: str = "gradOutput") -> None:
    if grad.dtype != x.dtype:
        raise RuntimeError(f"expected dtype {ATEN_NAMES.get(x.dtype, x.dtype)} for `{what}` but got dtype "
                           f"{ATEN_NAMES.get(grad.dtype, grad.dtype)}")


def result(like: torch.Tensor, shape, fmt=None, dtype=None, out=None, inputs=()) -> torch.Tensor:
    """A fresh result of ``shape`` in memory format ``fmt`` (default: like's suggested one), or ``out`` checked
    as ATen checks an out= (device, exact dtype) and, if its shape differs, resized into that format. An out=
    sharing memory with an input would be read while written: ATen serves it."""
    shape = list(shape)
    if fmt is None or len(shape) not in (4, 5):
        fmt = suggest_memory_format(like) if len(shape) == like.dim() else torch.contiguous_format
    dtype = like.dtype if dtype is None else dtype
    if out is None:
        return torch.empty(shape, dtype=dtype, device=like.device, memory_format=fmt)
    check_out(out, like, dtype)
    if list(out.shape) != shape:
        out.resize_(shape, memory_format=fmt)
    storage = out.untyped_storage().data_ptr()
    if any(t.untyped_storage().data_ptr() == storage for t in (like, *inputs)):
        raise Fallback("out= shares memory with an input")
    return out


def pooling_samples(name: str, *args):
    """The generator gems.testing.samples_pooling.<name>(*args), made on first use."""
    return lazy("gems.testing.samples_pooling", name, *args)


def pooling_perf(kind: str, shapes: str):
    """The perf inputs of gems.testing.samples_pooling.pooling_perf(kind) on the perf/shapes.yaml key
    ``shapes`` ([N, C, H, W, layout]: layout 1 contiguous, 2 channels-last)."""
    return lazy_perf("gems.testing.samples_pooling", "pooling_perf", kind, shapes=shapes)
