"""rrelu_with_noise (with .out and the in-place rrelu_with_noise_): the randomized leaky ReLU.

Training: each element x <= 0 draws a slope r from U[lower, upper) (fp32, fp64 for float64) and gives
x * r, with r written to ``noise``; any other element (NaN included) gives x and noise 1, as ATen's
kernels do. One launch reads x and writes the result and the noise. Not training: the leaky ReLU of
slope (lower + upper) / 2 through the pointwise generator, noise untouched (ATen calls leaky_relu).
The result is contiguous (ATen's legacy contiguous format). ATen's CPU kernel has no float16 training
path (NotImplementedError), its CUDA kernel has one: gems follows the device.
"""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import PointwiseOp, float64_bits
from gems.dtypes import ATEN_NAMES, FLOATS
from gems.ops.creation.fill import INT32_LIMIT
from gems.ops.random.philox import (
    SEED_DRAW,
    dense_like,
    lane_grid,
    philox_key,
    philox_words,
    random_samples,
    side_by_side,
    uniform24,
    uniform53,
)
from gems.runtime.launch import Launcher
from gems.spec import OpSpec


@triton.jit
def _randomized(u, offs, n, x_ptr, out_ptr, noise_ptr, lower, upper):
    """A block of elements: r = lower + (upper - lower) * u; out = x * r, noise = r where x <= 0, else
    out = x, noise = 1 (in u's precision)."""
    inside = offs < n
    x = tl.load(x_ptr + offs, mask=inside, other=0).to(u.dtype)
    r = lower + (upper - lower) * u
    negative = x <= 0
    tl.store(out_ptr + offs, tl.where(negative, x * r, x).to(out_ptr.dtype.element_ty), mask=inside)
    tl.store(noise_ptr + offs, tl.where(negative, r, 1.0).to(noise_ptr.dtype.element_ty), mask=inside)


@triton.jit(do_not_specialize=["seed", "offset", "graph"])
def _rrelu_kernel(x_ptr, out_ptr, noise_ptr, seed_ptr, offset_ptr, seed: tl.int64, offset: tl.int64, graph: tl.int32,
                  lower, upper, n, WIDE: tl.constexpr, INT64: tl.constexpr, LANES: tl.constexpr):
    """The training rrelu over a dense block of n: a program covers LANES * 4 elements (2 for float64),
    value k of lane j at element 4j + k (2j + k)."""
    pid = tl.program_id(0)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        pid = pid.to(tl.int64)
    r0, r1, r2, r3 = philox_words(seed, offset, graph, pid * LANES + tl.arange(0, LANES), seed_ptr, offset_ptr)
    if WIDE:
        lower = tl.cast(tl.cast(lower, tl.int64), tl.float64, bitcast=True)
        upper = tl.cast(tl.cast(upper, tl.int64), tl.float64, bitcast=True)
        u = side_by_side(uniform53(r0, r1), uniform53(r2, r3), 0, 0, 2)
        _randomized(u, pid * (2 * LANES) + tl.arange(0, 2 * LANES), n, x_ptr, out_ptr, noise_ptr, lower, upper)
    else:
        u = side_by_side(uniform24(r0), uniform24(r1), uniform24(r2), uniform24(r3), 4)
        _randomized(u, pid * (4 * LANES) + tl.arange(0, 4 * LANES), n, x_ptr, out_ptr, noise_ptr, lower, upper)


@triton.jit
def _leaky(x, slope):
    return tl.where(x > 0, x, x * slope)


_rrelu = Launcher(_rrelu_kernel)
_leaky_op = PointwiseOp("rrelu_eval", _leaky, operands=1, scalars=("slope",), dtypes=FLOATS, round_scalars=False)


def _check(self, noise, training):
    if self.dtype not in FLOATS or (training and self.dtype is torch.float16 and self.device.type == "cpu"):
        raise NotImplementedError(f"\"rrelu_with_noise_out_cpu\" not implemented for "
                                  f"'{ATEN_NAMES.get(self.dtype, self.dtype)}'")
    if noise.shape != self.shape:
        raise RuntimeError("noise tensor shape must match self tensor shape. Got self.shape = "
                           f"{list(self.shape)} noise.shape = {list(noise.shape)}")
    if noise.dtype != self.dtype:
        raise RuntimeError(f"expected scalar type {ATEN_NAMES[self.dtype]} but found "
                           f"{ATEN_NAMES.get(noise.dtype, noise.dtype)}")


def _train(x, noise, lower, upper, generator, out):
    """out (contiguous, or x itself in place) and noise from one launch."""
    numel = x.numel()
    if numel == 0:
        return out
    direct = noise.is_contiguous() and out.is_contiguous()
    noise_out = noise if direct else torch.empty(x.shape, dtype=noise.dtype, device=x.device)
    result = out if direct else torch.empty(x.shape, dtype=x.dtype, device=x.device)
    wide = x.dtype == torch.float64
    per_lane = 2 if wide else 4
    lanes, programs, num_warps = lane_grid(numel, per_lane, max(x.dtype.itemsize, 4))
    key = philox_key(x.device, generator)
    bounds = (float64_bits(float(lower)), float64_bits(float(upper))) if wide else (float(lower), float(upper))
    _rrelu((programs,), dense_like(x, result), result, noise_out, *key.kernel_args(x.device), *bounds, numel, wide,
           numel + lanes * per_lane > INT32_LIMIT, lanes, num_warps=num_warps)
    if not direct:
        noise.copy_(noise_out)
        out.copy_(result)
    return out


def rrelu_with_noise_out(self, noise, lower=0.125, upper=1 / 3, training=False, generator=None, *, out):
    _check(self, noise, training)
    if out.shape != self.shape:
        out.resize_(self.shape)
    if not training:
        return _leaky_op(self, (float(lower) + float(upper)) / 2, out=out)
    return _train(self, noise, lower, upper, generator, out)


def rrelu_with_noise(self, noise, lower=0.125, upper=1 / 3, training=False, generator=None):
    out = torch.empty_like(self, memory_format=torch.contiguous_format)
    return rrelu_with_noise_out(self, noise, lower, upper, training, generator, out=out)


def rrelu_with_noise_(self, noise, lower=0.125, upper=1 / 3, training=False, generator=None):
    _check(self, noise, training)
    if not training:
        return _leaky_op(self, (float(lower) + float(upper)) / 2, out=self, inplace=True)
    return _train(self, noise, lower, upper, generator, self)


SPECS = [
    OpSpec(
        name="rrelu_with_noise", family="random",
        impls={"rrelu_with_noise": rrelu_with_noise, "rrelu_with_noise.out": rrelu_with_noise_out,
               "rrelu_with_noise_": rrelu_with_noise_},
        call=torch.ops.aten.rrelu_with_noise, samples=random_samples("rrelu_samples"), dtypes=FLOATS,
        aten_decisions=SEED_DRAW,
        known_failures={("nvidia", "*", "noise-shape-error"): "ATen's CUDA kernel takes a noise of another shape "
                        "without a check (H200, torch 2.11, float16); gems raises ATen's CPU error"},
    ),
]
