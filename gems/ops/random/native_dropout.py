"""native_dropout (and native_dropout.out): ``(x * keep * scale, keep)`` with keep = (u < 1 - p) drawn per
element and scale = 1 / (1 - p) (0 when p = 1), as ATen's CUDA kernel computes it (in fp32, fp64 for
float64): a dropped element is ``x * 0``, so -0.0 for a negative x and NaN for NaN. One launch reads x
and writes the output and the bool mask; each lane draws four elements' keep bits from one Philox call.

Shortcuts as ATen's: train=False returns a copy of x and an all-true mask (no draw, no check of p); an
empty x returns at once (the CPU's mask then has x's dtype); p = 1 on an accelerator gives zeros (ATen's
CUDA shortcut), while the CPU multiplies by 0. p outside [0, 1] (NaN too) raises ATen's CPU error,
which names 1 - p (its mask is bernoulli_(1 - p)).
"""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import float64_bits, is_dense, pointwise_config
from gems.dtypes import FLOATS
from gems.ops.creation.fill import INT32_LIMIT, fill_dense
from gems.ops.random.distributions import store_as
from gems.ops.random.philox import (
    SEED_DRAW,
    dense_like,
    draws_perf,
    lanes_and_programs,
    philox_key,
    philox_words,
    random_samples,
    uniform24,
    uniform53,
)
from gems.runtime.launch import Launcher
from gems.spec import OpSpec


@triton.jit
def _drop(u, offs, n, x_ptr, out_ptr, mask_ptr, keep_prob, scale):
    """One block of elements: keep = u < keep_prob; out = x * keep * scale (in u's precision); mask = keep."""
    inside = offs < n
    keep = u < keep_prob
    x = tl.load(x_ptr + offs, mask=inside, other=0).to(u.dtype)
    tl.store(out_ptr + offs, (x * keep.to(u.dtype) * scale).to(out_ptr.dtype.element_ty), mask=inside)
    tl.store(mask_ptr + offs, keep.to(mask_ptr.dtype.element_ty), mask=inside)


@triton.jit(do_not_specialize=["seed", "offset", "graph"])
def _dropout_kernel(x_ptr, out_ptr, mask_ptr, seed_ptr, offset_ptr, seed: tl.int64, offset: tl.int64, graph: tl.int32,
                    keep_prob, scale, n, WIDE: tl.constexpr, INT64: tl.constexpr, LANES: tl.constexpr):
    """Over a dense block of n: out = x * keep * scale, mask = keep = (u < keep_prob). A program covers
    LANES * 4 elements (2 for float64), value k of lane j at element k * LANES + j (coalesced blocks)."""
    pid = tl.program_id(0)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        pid = pid.to(tl.int64)
    lanes = tl.arange(0, LANES)
    r0, r1, r2, r3 = philox_words(seed, offset, graph, pid * LANES + lanes, seed_ptr, offset_ptr)
    if WIDE:  # float64: 53-bit uniforms, two per lane; the parameters arrive as their bits
        keep_prob = tl.cast(tl.cast(keep_prob, tl.int64), tl.float64, bitcast=True)
        scale = tl.cast(tl.cast(scale, tl.int64), tl.float64, bitcast=True)
        offs = pid * (2 * LANES) + lanes
        _drop(uniform53(r0, r1), offs, n, x_ptr, out_ptr, mask_ptr, keep_prob, scale)
        _drop(uniform53(r2, r3), offs + LANES, n, x_ptr, out_ptr, mask_ptr, keep_prob, scale)
    else:
        offs = pid * (4 * LANES) + lanes
        _drop(uniform24(r0), offs, n, x_ptr, out_ptr, mask_ptr, keep_prob, scale)
        _drop(uniform24(r1), offs + LANES, n, x_ptr, out_ptr, mask_ptr, keep_prob, scale)
        _drop(uniform24(r2), offs + 2 * LANES, n, x_ptr, out_ptr, mask_ptr, keep_prob, scale)
        _drop(uniform24(r3), offs + 3 * LANES, n, x_ptr, out_ptr, mask_ptr, keep_prob, scale)


_dropout = Launcher(_dropout_kernel)


def dropout_into(x, p, out, mask, generator=None):
    """Draw the mask and write the output (out and mask laid out alike, dense; x read in their order)."""
    numel = x.numel()
    keep_prob = 1.0 - p
    scale = 0.0 if keep_prob == 0 else 1.0 / keep_prob
    wide = x.dtype == torch.float64
    per_lane = 2 if wide else 4
    block_values, num_warps = pointwise_config(numel, max(x.dtype.itemsize, 4))
    lanes, programs = lanes_and_programs(numel, per_lane, block_values)
    key = philox_key(x.device, generator)

    args = (float64_bits(keep_prob), float64_bits(scale)) if wide else (keep_prob, scale)
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
