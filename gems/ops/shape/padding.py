"""What reflection_pad{1,2,3}d and replication_pad{1,2,3}d share: ATen's checks, the forward (the family's copy
kernel in REFLECT or REPLICATE mode over the last 1-3 dims) and the backward kernels.

``pad`` is (left, right) of the last dim, then (top, bottom) of the one before, then (front, back).

The backwards are output-indexed, so deterministic (ATen's CUDA kernels add into grad_input atomically):
each grad_input element sums the grad_output elements that read it, in fp32 (fp64 for float64), rounded once.
Along a reflected dim an input element is read by at most three output positions (itself, its mirror image
left of the input, its mirror image right of it): 3, 9 or 27 masked loads per element. Along a replicated
dim the edge elements are read by the whole pad: a loop over the longest range of the tile.
"""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import pointwise_config
from gems.dtypes import ATEN_NAMES, NUMERIC
from gems.ops.shape.remap import INT32_LIMIT, REFLECT, REPLICATE, dims_of, remap
from gems.ops.shape.shared import checked_dtype, empty_suggested, prepared_out, shape_perf
from gems.runtime.launch import Launcher, cdiv, next_power_of_2
from gems.spec import OpSpec, lazy

_DIM_NAMES = ("W", "H", "D")  # the padded dims from the last one, as ATen's messages name them


@triton.jit
def _reflected_from(i, n, lo, m, K: tl.constexpr):
    """Output coordinate (and whether it exists) of the K-th reader of input coordinate i along a reflected dim
    (n inputs, pad lo before, m outputs): K = 0 the copy itself, 1 the mirror left of the input, 2 the right."""
    if K == 0:
        o = i + lo
        ok = (o >= 0) & (o < m)
    elif K == 1:
        o = lo - i
        ok = (i >= 1) & (o >= 0) & (o < m)
    else:
        o = lo + 2 * (n - 1) - i
        ok = (i <= n - 2) & (o >= 0) & (o < m)
    return o, ok


@triton.jit
def _replicated_from(i, n, lo, m):
    """(first output coordinate, how many) reading input coordinate i along a replicated dim: the edges are
    read by their whole pad."""
    start = tl.where(i == 0, 0, i + lo)
    end = tl.where(i == n - 1, m, i + lo + 1)
    start = tl.minimum(tl.maximum(start, 0), m)
    end = tl.minimum(tl.maximum(end, 0), m)
    return start, tl.maximum(end - start, 0)


@triton.jit
def _pad_backward_kernel(go_ptr, gi_ptr, n_rows, tiles_c, C, D, H, W, Do, Ho, Wo, lo_d, lo_h, lo_w,
                         s_go_n, s_go_c, s_go_d, s_go_h, s_go_w, s_gi_n, s_gi_c, s_gi_d, s_gi_h, s_gi_w,
                         REFLECTED: tl.constexpr, READERS_D: tl.constexpr, READERS_H: tl.constexpr,
                         ACC: tl.constexpr, INT64: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    """grad_input (N, C, D, H, W) = the sum of the grad_output (N, C, Do, Ho, Wo) elements that read each
    element. Rows are (n, c, d, h), columns w; one program per tile."""
    pid = tl.program_id(0)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        pid = pid.to(tl.int64)
    rows = (pid // tiles_c) * BLOCK_R + tl.arange(0, BLOCK_R)
    w = (pid % tiles_c) * BLOCK_C + tl.arange(0, BLOCK_C)
    in_rows = rows < n_rows
    in_cols = w < W
    h = rows % H
    t = rows // H
    d = t % D
    t = t // D
    c = t % C
    n = t // C
    go_rows = go_ptr + n * s_go_n + c * s_go_c
    acc = tl.zeros([BLOCK_R, BLOCK_C], ACC)
    if REFLECTED:
        for kd in tl.static_range(READERS_D):
            od, ok_d = _reflected_from(d, D, lo_d, Do, kd)
            for kh in tl.static_range(READERS_H):
                oh, ok_h = _reflected_from(h, H, lo_h, Ho, kh)
                row_ptrs = go_rows + od * s_go_d + oh * s_go_h
                row_ok = in_rows & ok_d & ok_h
                for kw in tl.static_range(3):
                    ow, ok_w = _reflected_from(w, W, lo_w, Wo, kw)
                    mask = row_ok[:, None] & (in_cols & ok_w)[None, :]
                    acc += tl.load(row_ptrs[:, None] + (ow * s_go_w)[None, :], mask=mask, other=0).to(ACC)
    else:
        start_d, count_d = _replicated_from(d, D, lo_d, Do)
        start_h, count_h = _replicated_from(h, H, lo_h, Ho)
        start_w, count_w = _replicated_from(w, W, lo_w, Wo)
        for td in range(0, tl.max(tl.where(in_rows, count_d, 0), axis=0)):
            for th in range(0, tl.max(tl.where(in_rows, count_h, 0), axis=0)):
                row_ptrs = go_rows + (start_d + td) * s_go_d + (start_h + th) * s_go_h
                row_ok = in_rows & (td < count_d) & (th < count_h)
                for tw in range(0, tl.max(tl.where(in_cols, count_w, 0), axis=0)):
                    mask = row_ok[:, None] & (in_cols & (tw < count_w))[None, :]
                    acc += tl.load(row_ptrs[:, None] + ((start_w + tw) * s_go_w)[None, :], mask=mask,
                                   other=0).to(ACC)
    gi = gi_ptr + n * s_gi_n + c * s_gi_c + d * s_gi_d + h * s_gi_h
    tl.store(gi[:, None] + (w * s_gi_w)[None, :], acc.to(gi_ptr.dtype.element_ty),
             mask=in_rows[:, None] & in_cols[None, :])


_pad_backward = Launcher(_pad_backward_kernel)


def check_input(name, x, pad, dims, reflected):
    """ATen's checks of reflection/replication_pad{dims}d; returns pad as (lo, hi) per padded dim, last first."""
    if len(pad) != 2 * dims:
        raise RuntimeError(f"padding size is expected to be {2 * dims}, but got: {len(pad)}")
    batched = x.dim() == dims + 2
    if x.dim() not in (dims + 1, dims + 2) or any(n == 0 for n in x.shape[1 if batched else 0:]):
        raise RuntimeError(f"Expected {dims + 1}D or {dims + 2}D (batch mode) tensor with possibly 0 batch size and "
                           f"other non-zero dimensions for input, but got: {list(x.shape)}")
    if x.dtype is torch.bool:
        raise NotImplementedError(f'"{name}" not implemented for \'Bool\'')
    pairs = [(pad[2 * k], pad[2 * k + 1]) for k in range(dims)]
    for k, (lo, hi) in enumerate(pairs):
        n = x.shape[-1 - k]
        if reflected and not (lo < n and hi < n):
            raise RuntimeError(f"Argument #{4 + 2 * k}: Padding size should be less than the corresponding input "
                               f"dimension, but got: padding ({lo}, {hi}) at dimension {x.dim() - 1 - k} of input "
                               f"{list(x.shape)}")
    sizes = [x.shape[-1 - k] for k in range(dims)]
    if all(n + lo + hi < 1 for n, (lo, hi) in zip(sizes, pairs)):  # ATen refuses only when no dim is left
        names = range(dims - 1, -1, -1)
        given = ", ".join(f"{_DIM_NAMES[k]}: {sizes[k]}" for k in names)
        computed = " ".join(f"{_DIM_NAMES[k]}: {sizes[k] + sum(pairs[k])}" for k in names)
        raise RuntimeError(f"input ({given}) is too small. Calculated output {computed}")
    return pairs


def _padded_shape(x, pairs):
    shape = list(x.shape)
    for k, (lo, hi) in enumerate(pairs):
        shape[-1 - k] += lo + hi
    return shape


def pad(name, x, pad_, dims, reflected, out=None):
    """The forward: out (given, or in x's suggested memory format) = x padded."""
    pairs = check_input(name, x, pad_, dims, reflected)
    checked_dtype(x)
    shape = _padded_shape(x, pairs)
    out = empty_suggested(x, shape) if out is None else prepared_out(out, x, shape)
    mode = REFLECT if reflected else REPLICATE
    modes = {x.dim() - 1 - k: (mode, lo) for k, (lo, _) in enumerate(pairs)}
    return remap(x, out, dims_of(x, out, modes))


def _five_dims(t, dims):
    """t's (sizes, strides) as (N, C, D, H, W): missing batch and padded dims are size 1."""
    lead = 2 + dims - t.dim()  # 1 for an unbatched input
    sizes = [1] * lead + list(t.shape)
    strides = [0] * lead + list(t.stride())
    sizes[2:2] = [1] * (3 - dims)
    strides[2:2] = [0] * (3 - dims)
    return sizes, strides


def pad_backward(name, grad_output, x, pad_, dims, reflected, grad_input=None):
    """grad_input (given, or like x in its suggested memory format) of the padding of x."""
    if len(pad_) < 2 * dims:
        raise RuntimeError(f"padding size is expected to be {2 * dims}, but got: {len(pad_)}")
    pairs = [(pad_[2 * k], pad_[2 * k + 1]) for k in range(dims)]
    if reflected:
        for k, (lo, hi) in enumerate(pairs):
            if not (lo < x.shape[-1 - k] and hi < x.shape[-1 - k]):
                raise RuntimeError(f"Argument #{4 + 2 * k}: Padding size should be less than the corresponding input "
                                   f"dimension, but got: padding ({lo}, {hi}) at dimension {x.dim() - 1 - k} of "
                                   f"input {list(x.shape)}")
    if grad_output.dim() != x.dim():
        raise IndexError(f"Dimension out of range (expected to be in range of [{-grad_output.dim()}, "
                         f"{grad_output.dim() - 1}], but got {x.dim() - 1})")
    if grad_output.shape[:-dims] != x.shape[:-dims]:  # ATen reads such a gradient out of its bounds
        raise RuntimeError(f"gradOutput batch and channel sizes {list(grad_output.shape[:-dims])} differ from the "
                           f"input's {list(x.shape[:-dims])}")
    for k, (lo, hi) in enumerate(pairs):
        want, got = x.shape[-1 - k] + lo + hi, grad_output.shape[-1 - k]
        if want != got:
            raise RuntimeError(f"gradOutput {('width', 'height', 'depth')[k]} unexpected. Expected: {want}, Got: {got}")
    if not grad_output.dtype.is_floating_point:
        raise NotImplementedError(f'"{name}" not implemented for \'{ATEN_NAMES.get(grad_output.dtype)}\'')
    if x.dtype != grad_output.dtype:
        raise RuntimeError(f"expected scalar type {ATEN_NAMES.get(grad_output.dtype)} but found "
                           f"{ATEN_NAMES.get(x.dtype)}")
    checked_dtype(grad_output)
    gi = empty_suggested(x, x.shape) if grad_input is None else prepared_out(grad_input, grad_output, x.shape)
    if gi.numel() == 0:
        return gi
    (n, c, d, h, w), s_gi = _five_dims(gi, dims)
    (_, _, do, ho, wo), s_go = _five_dims(grad_output, dims)
    lows = [lo for lo, _ in pairs] + [0] * (3 - dims)  # w, h, d
    n_rows = n * c * d * h
    block, num_warps = pointwise_config(gi.numel(), gi.element_size())
    block_c = min(next_power_of_2(w), block)
    block_r = min(max(1, block // block_c), next_power_of_2(n_rows))
    tiles_c = cdiv(w, block_c)
    readers = 3 if reflected else 1
    reach = sum((size - 1) * abs(s) for size, s in zip(grad_output.shape, grad_output.stride()))
    acc = tl.float64 if gi.dtype is torch.float64 else tl.float32
    _pad_backward((cdiv(n_rows, block_r) * tiles_c,), grad_output, gi, n_rows, tiles_c, c, d, h, w, do, ho, wo,
                  lows[2], lows[1], lows[0], *s_go, *s_gi, reflected, readers if dims == 3 else 1,
                  readers if dims >= 2 else 1, acc, max(reach, gi.numel()) > INT32_LIMIT, block_r, block_c,
                  num_warps=num_warps)
    return gi


def padding_spec(kind: str, dims: int):
    """The declaration of ``{kind}_pad{dims}d`` (kind: reflection or replication) with its out= form and its
    backward's two overloads."""
    name = f"{kind}_pad{dims}d"
    reflected = kind == "reflection"

    def forward(self, padding):
        return pad(name, self, padding, dims, reflected)

    def forward_out(self, padding, *, out):
        return pad(name, self, padding, dims, reflected, out=out)

    def backward(grad_output, self, padding):
        return pad_backward(f"{name}_backward", grad_output, self, padding, dims, reflected)

    def backward_out(grad_output, self, padding, *, grad_input):
        return pad_backward(f"{name}_backward", grad_output, self, padding, dims, reflected, grad_input)

    impls = {name: forward, f"{name}.out": forward_out, f"{name}_backward": backward,
             f"{name}_backward.grad_input": backward_out}
    # pointwise: the backward sums up to 3**dims gradients per element (the forward copies exactly)
    # Measured on an H200 (torch 2.11, 2026-11-26): ATen's CUDA replication_pad2d/3d kernels fail to launch ("CUDA
    # error: invalid argument") on an empty width; gems returns the empty result. No ATen answer to compare with.
    skips = {("nvidia", "*", "empty-width"): "ATen's CUDA kernel fails to launch (CUDA error: invalid argument) on "
             "an empty width"} if kind == "replication" and dims > 1 else {}
    return OpSpec(name=name, family="tensor", impls=impls, call=getattr(torch.ops.aten, name).default,
                  samples=lazy("gems.testing.samples_shape", "padding_samples", kind, dims), dtypes=NUMERIC,
                  perf=shape_perf(f"{kind}-pad{dims}d", shapes="shape_image"), skips=skips)
