"""What the convolution operators share: ATen's argument checks, the geometry of a call, index helpers
of the implicit-GEMM kernels, their autotuning and the perf declaration.

Every convolution is computed as a 3-d one: a 1-d or 2-d call is a view with unit depth (and height),
so one kernel of each kind covers conv1d, conv2d and conv3d. Tensors are read through their strides
(NCHW, channels-last or any view); an operand whose channels the tap-major loops reduce over is first
copied to NHWC by a gems kernel unless they are innermost already (channels_innermost), so a call
launches nothing but gems kernels. The kernels are implicit GEMMs (the im2col matrix is
never built, its entries are gathered as the tiles are loaded):

    forward   y[n, g*K + k, o]   = sum over (c, tap) of x[n, g*C + c, o*stride - pad + tap*dil] * w[g*K + k, c, tap]
              M = output pixels, N = K (output channels of a group), reduction C * taps
    grad x    dx[n, g*C + c, i]  = sum over (k, tap), o*stride == i + pad - tap*dil, of dy[n, g*K + k, o] * w[...]
              M = input pixels, N = C, reduction K * taps
    grad w    dw[g*K + k, c, tap] = sum over (n, o) of dy[n, g*K + k, o] * x[n, g*C + c, o*stride - pad + tap*dil]
              M = K, N = C * taps, reduction N * output pixels (split over programs, then summed)

A reduction over channels with several taps runs tap-major ("per tap" loop: one tap, a BLOCK_K slice of
channels per step, so only BLOCK_M / BLOCK_N index vectors are recomputed per step); when the channels
of a group are fewer than a dot's smallest K (the RGB stem, small groups), the reduction is flattened
over (channel, tap) instead so that the tiles are not mostly padding (FLAT). Depthwise convolutions (one
input channel per group) do not come here: depthwise.py has direct kernels for them.

fp32 products are exact IEEE products (``input_precision="ieee"``): cuDNN's default TF32 for fp32
convolutions (``torch.backends.cudnn.conv.fp32_precision``) would miss fp32 tolerances against the
float64 oracle by orders of magnitude; TF32 is used only where the user allowed TF32 matmuls
(``torch.backends.cuda.matmul.allow_tf32``, as the GEMM operators do).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import triton
import triton.language as tl

from gems.ops.blas import tuning
from gems.ops.blas.gemm import dot_precision
from gems.runtime import selection
from gems.runtime.launch import Launcher, cdiv
from gems.runtime.registration import Fallback
from gems.spec import PerfSpec, lazy

# The dtypes gems convolves (fp16/bf16 accumulate in fp32, fp64 in fp64); ATen runs the others.
CONV_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
# Channels of a group below a dot's smallest K (16) make tap-major tiles mostly padding: flatten.
FLAT_BELOW = 16
# The grid's second and third axes (groups; images of the NHWC copy) are at most this long.
MAX_GROUPS = 65535
# GEMMs of at most this many outputs (a 256 x 256 tile grid) take the smallest config untuned.
SMALL_GEMM = 2**16
# Index math in 64 bits once a tensor spans more elements than int32 offsets reach (with a margin).
_INT32_SAFE = 2**31 - 1 - 2**20
# NCHW operands are copied to NHWC by a gems kernel (BLOCK_NHWC x BLOCK_NHWC (channel, pixel) tiles,
# transposed through shared memory), not by ATen's permuted copy: a call then only allocates, views and
# launches Triton kernels, which the native layer records as a plan and replays from C++. With ATen's copy
# every 3x3 call ran in Python (115-150 us of host time, up to 1.2 ms in a bad process), which gems-perf
# timed instead of the GPU. H100, fp16, copy alone (us): 64ch 56x56 ATen 35.3, BLOCK 32/4 warps 14.8,
# 64/4 12.7, 64/8 13.1, 128/4 14.0; 256ch 14x14 ATen 15.5, 64/4 7.2, 64/8 7.3, 128/4 14.5. Whole 3x3
# conv (batch 32): 64->64 56x56 0.057 ms vs ATen 0.077; 256->256 14x14 0.047 vs 0.046.
BLOCK_NHWC, NHWC_WARPS = 64, 4
# The sums of split reductions (grad_weight): elements per program.
SUM_BLOCK = 1024
TL_ACC = {torch.float16: tl.float32, torch.bfloat16: tl.float32, torch.float32: tl.float32,
          torch.float64: tl.float64}


# --------------------------------------------------------------------------- kernel helpers


@triton.jit
def grouped_tile(pid, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    """(pid_m, pid_n) of tile ``pid``, GROUP_M tile rows at a time so that neighbours share operands in L2."""
    grid_m = (M + BLOCK_M - 1) // BLOCK_M
    grid_n = (N + BLOCK_N - 1) // BLOCK_N
    width = GROUP_M * grid_n
    first_m = (pid // width) * GROUP_M
    rows = tl.minimum(grid_m - first_m, GROUP_M)
    return first_m + (pid % width) % rows, (pid % width) // rows


@triton.jit
def split_pixel(p, D, H, W):
    """(n, d, h, w) of flat pixel indices p of an (N, D, H, W) grid."""
    w = p % W
    q = p // W
    h = q % H
    q = q // H
    return q // D, q % D, h, w


@triton.jit
def split_tap(q, T, R, S):
    """(c, t, r, s) of flat (channel, tap) indices q, taps (t, r, s) fastest as in a contiguous weight."""
    s = q % S
    q = q // S
    r = q % R
    q = q // R
    return q // T, q % T, r, s


@triton.jit
def _nhwc_copy_kernel(src_ptr, dst_ptr, C, P, H, W, s_n, s_c, s_d, s_h, s_w, TILES_P, TILES_C,
                      DENSE: tl.constexpr, INT64: tl.constexpr, BLOCK: tl.constexpr):
    """dst[n, p, c] = src[n, c, p] over the pixels p = (d, h, w) of an (N, C, D, H, W) source: one
    BLOCK x BLOCK (channel, pixel) tile per program, pixel tiles fastest, then channel tiles, then images
    (loads along p, stores along c). DENSE: the pixels are contiguous (s_w == 1, s_h == W, s_d == H * W),
    so a tile's rows are vector loads; otherwise each pixel is placed through its strides."""
    pid = tl.program_id(0)
    n = pid // (TILES_P * TILES_C)
    offs_p = (pid % TILES_P) * BLOCK + tl.arange(0, BLOCK)
    offs_c = (pid // TILES_P % TILES_C) * BLOCK + tl.arange(0, BLOCK)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        n = n.to(tl.int64)
        offs_p = offs_p.to(tl.int64)
        offs_c = offs_c.to(tl.int64)
    if DENSE:
        at_p = offs_p
    else:
        at_p = offs_p // (H * W) * s_d + offs_p // W % H * s_h + offs_p % W * s_w
    mask = (offs_c < C)[:, None] & (offs_p < P)[None, :]
    tile = tl.load(src_ptr + n * s_n + offs_c[:, None] * s_c + at_p[None, :], mask=mask)
    tl.store(dst_ptr + n * P * C + offs_p[None, :] * C + offs_c[:, None], tile, mask=mask)


_nhwc_copy = Launcher(_nhwc_copy_kernel)


@triton.jit
def _sum_splits_kernel(part_ptr, out_ptr, numel, SPLIT, BLOCK: tl.constexpr):
    """out[i] = sum over s < SPLIT of part[s, i], in split order (deterministic)."""
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < numel
    acc = tl.load(part_ptr + offs, mask=mask, other=0)
    for s in range(1, SPLIT):
        acc += tl.load(part_ptr + s * numel + offs, mask=mask, other=0)
    tl.store(out_ptr + offs, acc.to(out_ptr.dtype.element_ty), mask=mask)


_sum_launcher = Launcher(_sum_splits_kernel)


def sum_splits(part: torch.Tensor, out: torch.Tensor, split: int) -> None:
    """out = part.sum(0) in split order, part (split, *out.shape) in the accumulator type."""
    _sum_launcher((cdiv(out.numel(), SUM_BLOCK),), part, out, out.numel(), split, SUM_BLOCK)


# --------------------------------------------------------------------------- geometry and ATen's checks


@dataclass(frozen=True)
class Geometry:
    """One convolution as 3-d: x5 (N, G*C, D, H, W), w5 (G*K, C, T, R, S) views, output sizes."""

    x5: torch.Tensor
    w5: torch.Tensor
    groups: int
    c: int  # input channels of a group
    k: int  # output channels of a group
    out: tuple  # (OD, OH, OW)
    stride: tuple
    padding: tuple
    dilation: tuple
    out_shape: tuple  # the result's shape at the call's rank

    @property
    def taps(self) -> tuple:
        return tuple(self.w5.shape[2:])

    @property
    def flat_forward(self) -> bool:
        return self.c < FLAT_BELOW


def _expand(name: str, values, dims: int) -> tuple:
    values = list(values)
    if len(values) == 1:
        values = values * dims
    if len(values) != dims:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {dims} values to match "
                           f"the convolution dimensions, but got {name}={values}")
    return tuple(int(v) for v in values)


def as_3d(t: torch.Tensor, dims: int) -> torch.Tensor:
    """(A, B, *spatial) viewed as (A, B, D, H, W) with unit leading spatial sizes."""
    for _ in range(3 - dims):
        t = t.unsqueeze(2)
    return t


def geometry(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups) -> Geometry:
    """ATen's checks of ``convolution`` (RuntimeError, in its order, before any launch) and the call's geometry.
    A call gems does not compute raises Fallback."""
    if weight.dim() < 3:
        raise RuntimeError("weight should have at least three dimensions")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    dims = weight.dim() - 2
    stride, padding, dilation = (_expand(n, v, dims) for n, v in
                                 (("stride", stride), ("padding", padding), ("dilation", dilation)))
    _expand("output_padding", output_padding, dims)
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("non-positive dilation is not supported")
    if input.dim() != weight.dim():
        raise RuntimeError(f"Expected {weight.dim()}-dimensional input for {weight.dim()}-dimensional weight "
                           f"{list(weight.shape)}, but got {input.dim()}-dimensional input of size "
                           f"{list(input.shape)} instead")
    if transposed:
        raise Fallback("transposed convolution is left to ATen")
    k_total, c = weight.shape[0], weight.shape[1]
    if k_total < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, but got "
                           f"weight of size {list(weight.shape)} instead")
    if k_total % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but "
                           f"got weight of size {list(weight.shape)} instead")
    if input.shape[1] != c * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
                           f"{list(input.shape)} to have {c * groups} channels, but got {input.shape[1]} channels "
                           f"instead")
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != k_total):
        raise RuntimeError(f"Given weight of size {list(weight.shape)}, expected bias to be 1-dimensional with "
                           f"{k_total} elements, but got bias of size {list(bias.shape)} instead")
    padded = [input.shape[2 + i] + 2 * padding[i] for i in range(dims)]
    kernel = [dilation[i] * (weight.shape[2 + i] - 1) + 1 for i in range(dims)]
    if any(k > p for k, p in zip(kernel, padded)):
        raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel "
                           f"size: ({' x '.join(map(str, kernel))}). Kernel size can't be greater than actual input "
                           f"size")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dtype != input.dtype or t.device != input.device):
            raise RuntimeError(f"Input type ({input.dtype}) and {name} type ({t.dtype}) should be the same")
    if input.dtype not in CONV_DTYPES:
        raise Fallback(f"convolution of {input.dtype} is left to ATen")
    if c == 0:
        raise Fallback("convolution over zero input channels")
    if groups > MAX_GROUPS:
        raise Fallback(f"more than {MAX_GROUPS} groups (the grid's second axis)")
    out = [(padded[i] - kernel[i]) // stride[i] + 1 for i in range(dims)]
    pad3 = lambda v, fill: (fill,) * (3 - dims) + tuple(v)  # noqa: E731
    return Geometry(as_3d(input, dims), as_3d(weight, dims), groups, c, k_total // groups, pad3(out, 1),
                    pad3(stride, 1), pad3(padding, 0), pad3(dilation, 1), (input.shape[0], k_total, *out))


def channels_last(*tensors: torch.Tensor) -> torch.memory_format:
    """The layout ATen gives a convolution's result: channels-last when an operand is (4-d or 5-d)."""
    rank = tensors[0].dim()
    fmt = {4: torch.channels_last, 5: torch.channels_last_3d}.get(rank)
    if fmt is not None and any(t.is_contiguous(memory_format=fmt) and not t.is_contiguous() for t in tensors):
        return fmt
    return torch.contiguous_format


def channels_innermost(t: torch.Tensor) -> torch.Tensor:
    """``t`` (N, C, *spatial) with the channels innermost in memory (NHWC), copied if they are not. The
    tap-major loops load BLOCK_K consecutive channels of one pixel: with a unit channel stride (which
    Triton specializes on) those loads are 16-byte vectors that the pipeline copies asynchronously; NCHW
    would make them scalar gathers. cuDNN converts NCHW half-precision operands the same way. The copy is
    gems' kernel (any strides), so that the call stays recordable (see BLOCK_NHWC)."""
    order = (0, *range(2, t.dim()), 1)
    moved = t.permute(order)
    if moved.is_contiguous():
        return t
    back = [order.index(i) for i in range(t.dim())]
    out = torch.empty(moved.shape, dtype=t.dtype, device=t.device)
    n, c, d, h, w = t.shape  # a 5-d view (as_3d), not empty (an empty one is contiguous in any order)
    pixels, tiles_c = d * h * w, cdiv(c, BLOCK_NHWC)
    tiles_p = cdiv(pixels, BLOCK_NHWC)
    _nhwc_copy((n * tiles_c * tiles_p,), t, out, c, pixels, h, w, *t.stride(), tiles_p, tiles_c,
               t[0, 0].is_contiguous(), needs_int64(t, out), BLOCK_NHWC, num_warps=NHWC_WARPS)
    return out.permute(back)


def needs_int64(*tensors: torch.Tensor) -> bool:
    return max(sum((n - 1) * abs(s) for n, s in zip(t.shape, t.stride()) if n) + 1 for t in tensors) > _INT32_SAFE


def precision(dtype: torch.dtype, device: torch.device) -> str:
    return dot_precision(dtype, device)


# --------------------------------------------------------------------------- autotuning


def _tile_bytes(config, itemsize: int) -> int:  # unreached on the interpreter: one config per kernel
    meta = config.kwargs
    return max(config.num_stages, 1) * (meta["BLOCK_M"] + meta["BLOCK_N"]) * meta["BLOCK_K"] * itemsize


def _pruned(operand: str, area):
    """Prune the configs whose operand tiles over all stages exceed the device's shared memory (fp32 and
    fp64 need twice and four times fp16's; the smallest one if none fits). A GEMM of at most SMALL_GEMM
    outputs keeps only the smallest tile: tuning it would cost more than it could save (and a conformance
    run of many tiny shapes would spend minutes tuning)."""
    def prune(configs, named_args, **kwargs):  # unreached on the interpreter: one config per kernel, not pruned
        t = named_args[operand]
        itemsize, limit = t.element_size(), tuning.shared_memory(t.device)
        if area(named_args) <= SMALL_GEMM:
            return [min(configs, key=lambda c: (c.kwargs["BLOCK_M"] * c.kwargs["BLOCK_N"], _tile_bytes(c, itemsize)))]
        fits = [c for c in configs if _tile_bytes(c, itemsize) <= limit]
        return fits or [min(configs, key=lambda c: _tile_bytes(c, itemsize))]
    return prune


def conv_tuned(operand: str, keys: list[str], area):
    """Autotune over the vendor's "conv" configs, retuned when the named sizes change; ``area(named_args)``
    is the number of outputs of one group's GEMM."""
    return selection.current().autotune("conv", keys, prune_configs_by={"early_config_prune": _pruned(operand, area)})


def conv_perf() -> PerfSpec:
    """gems-perf inputs at the "conv" shapes of perf/shapes.yaml; flops 2 * output elements * C * taps."""
    return PerfSpec(inputs=lazy("gems.testing.samples_conv", "perf_inputs"), shapes="conv",
                    bytes=lazy("gems.testing.samples_conv", "moved_bytes"),
                    flops=lazy("gems.testing.samples_conv", "conv_flops"))
