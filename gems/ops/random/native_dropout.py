"""native_dropout (and native_dropout.out): ``(x * keep * scale, keep)`` with keep = (u < 1 - p) drawn per
element and scale = 1 / (1 - p) (0 when p = 1), as ATen's CUDA kernel computes it (in fp32, fp64 for
float64): a dropped element is ``x * 0``, so -0.0 for a negative x and NaN for NaN. One launch reads x
and writes the output and the bool mask; each lane draws four consecutive elements' keep bits from one
Philox call.

Shortcuts as ATen's: train=False returns a copy of x and an all-true mask (no draw, no check of p); an
empty x returns at once (the CPU's mask then has x's dtype); p = 1 on an accelerator gives zeros (ATen's
CUDA shortcut), while the CPU multiplies by 0. p outside [0, 1] (NaN too) raises ATen's CPU error,
which names 1 - p (its mask is bernoulli_(1 - p)).
"""

import math

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import float64_bits
from gems.codegen.pointwise_checks import is_dense
from gems.dtypes import FLOATS
from gems.ops.creation.fill import INT32_LIMIT, fill_dense
from gems.ops.random.distributions import store_as
from gems.ops.random.philox import (
    SEED_DRAW,
    dense_like,
    draws_perf,
    lane_grid,
    philox_key,
    philox_words,
    random_samples,
    side_by_side,
    uniform53,
)
from gems.runtime.launch import Launcher
from gems.spec import OpSpec


@triton.jit
def _drop(keep, offs, n, x_ptr, out_ptr, mask_ptr, scale):
    """out = x * keep * scale (in scale's precision), mask = keep, at offs below n."""
    inside = offs < n
    x = tl.load(x_ptr + offs, mask=inside, other=0).to(scale.dtype)
    tl.store(out_ptr + offs, (x * keep.to(scale.dtype) * scale).to(out_ptr.dtype.element_ty), mask=inside)
    tl.store(mask_ptr + offs, keep.to(mask_ptr.dtype.element_ty), mask=inside)


@triton.jit(do_not_specialize=["seed", "offset", "graph", "keep_prob"])
def _dropout_kernel(x_ptr, out_ptr, mask_ptr, seed_ptr, offset_ptr, seed: tl.int64, offset: tl.int64, graph: tl.int32,
                    keep_prob: tl.int64, scale, n, WIDE: tl.constexpr, INT64: tl.constexpr, LANES: tl.constexpr):
    """Over a dense block of n: out = x * keep * scale, mask = keep = (u < keep_prob). A program covers
    LANES * 4 elements (2 for float64), value k of lane j at element 4j + k (2j + k). keep_prob arrives as
    an integer, unspecialized (one kernel for every p): for float64 its bits; else ceil(keep_prob 2^24),
    which the words' top 24 bits are compared with (u < keep_prob exactly, u never converted)."""
    pid = tl.program_id(0)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        pid = pid.to(tl.int64)
    r0, r1, r2, r3 = philox_words(seed, offset, graph, pid * LANES + tl.arange(0, LANES), seed_ptr, offset_ptr)
    if WIDE:  # float64: 53-bit uniforms, two per lane; the parameters arrive as their bits
        scale = tl.cast(tl.cast(scale, tl.int64), tl.float64, bitcast=True)
        keep = side_by_side(uniform53(r0, r1), uniform53(r2, r3), 0, 0, 2) < keep_prob.to(tl.float64, bitcast=True)
        _drop(keep, pid * (2 * LANES) + tl.arange(0, 2 * LANES), n, x_ptr, out_ptr, mask_ptr, scale)
    else:
        top_bits = side_by_side(r0 >> 8, r1 >> 8, r2 >> 8, r3 >> 8, 4).to(tl.int32)
        keep = top_bits < keep_prob.to(tl.int32)
        _drop(keep, pid * (4 * LANES) + tl.arange(0, 4 * LANES), n, x_ptr, out_ptr, mask_ptr, scale)


_dropout = Launcher(_dropout_kernel)


def dropout_into(x, p, out, mask, generator=None):
    """Draw the mask and write the output (out and mask laid out alike, dense; x read in their order)."""
    numel = x.numel()
    keep_prob = 1.0 - p
    scale = 0.0 if keep_prob == 0 else 1.0 / keep_prob
    wide = x.dtype == torch.float64
    per_lane = 2 if wide else 4
    lanes, programs, num_warps = lane_grid(numel, per_lane, max(x.dtype.itemsize, 4))
    key = philox_key(x.device, generator)
    args = (float64_bits(keep_prob), float64_bits(scale)) if wide else (math.ceil(keep_prob * 2**24), scale)
    _dropout((programs,), dense_like(x, out), out, mask, *key.kernel_args(x.device), *args, numel, wide,
             numel + lanes * per_lane > INT32_LIMIT, lanes, num_warps=num_warps)


def native_dropout_out(input, p, train, *, out0, out1):
    if input.dtype not in FLOATS:
        raise RuntimeError(f"result type Float can't be cast to the desired output type {input.dtype}")
    for t in (out0, out1):
        if t.shape != input.shape:
            t.resize_(input.shape)
    if train is False:
        store_as(input, out0)
        fill_dense(out1, True)
        return out0, out1
    if input.numel() == 0:
        return out0, out1
    if not 0.0 <= p <= 1.0:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={1.0 - p:g}")
    if p == 1.0 and input.device.type != "cpu":  # ATen's CUDA shortcut: zeros, no draw
        return fill_dense(out0, 0.0), fill_dense(out1, False)
    dense = is_dense(out0) and is_dense(out1) and out0.stride() == out1.stride()
    out, mask = (out0, out1) if dense else (torch.empty_like(input), torch.empty_like(input, dtype=torch.bool))
    dropout_into(input, p, out, mask)
    if not dense:
        out0.copy_(out)
        out1.copy_(mask)
    return out0, out1


def native_dropout(input, p, train):
    # The CPU returns an empty input's mask in its dtype; CUDA a bool one.
    mask_dtype = input.dtype if input.numel() == 0 and input.device.type == "cpu" else torch.bool
    return native_dropout_out(input, p, train, out0=torch.empty_like(input),
                              out1=torch.empty_like(input, dtype=mask_dtype))


SPECS = [
    OpSpec(
        name="native_dropout", family="random",
        impls={"native_dropout": native_dropout, "native_dropout.out": native_dropout_out},
        call=torch.native_dropout, samples=random_samples("dropout_samples"), dtypes=FLOATS,
        perf=draws_perf("native_dropout"),
        aten_decisions=SEED_DRAW,
        known_failures={("nvidia", "*", variant): "ATen's CUDA kernel takes p outside [0, 1] without a check and "
                        "returns a result; gems raises ATen's CPU error" for variant in
                        ("p-above-one-error", "p-negative-error", "p-nan-error")},
    ),
]
