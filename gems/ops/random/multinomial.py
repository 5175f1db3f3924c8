"""multinomial (and multinomial.out): ``num_samples`` category indices per row of ``self`` (1-D: one
row), drawn with the row's weights (int64 result, contiguous). One program per row; each draw takes one
Philox block (philox.py) at lane ``row * n + j``.

- Without replacement (and for one sample either way), as ATen: the categories with the largest keys
  ``p / E``, E an Exp(1) draw per category (the exponential race, equivalent to Gumbel top-k); sample
  j is the largest key below sample j - 1's (ties by index), so long rows need no sorting buffer.
  Zero weights have key 0 and come last. Short rows share a program (a tile of rows x categories).
- With replacement: one row per program; sample j is the first category whose running sum exceeds u_j
  times the row's total, found by counting the prefix sums at or below it, block by block; a u_j that
  rounding puts past the last positive weight takes that category.

ATen's checks come first: 1 or 2 dims, floating weights, num_samples > 0, no more samples than
categories without replacement, at most 2^24 categories; then the values: one small kernel before the
draw finds a negative, infinite or NaN weight and a row of zeros. Where kernels are compiled it asserts
on the device, as ATen's CUDA kernels do (with replacement in the kernel, without through _assert_async),
so the call never waits for the device and the native layer replays it; where they are interpreted
(asserts off: philox.host_checks) it raises flags that are read back once, and the call raises ATen's error.
"""

import torch
import triton
import triton.language as tl

from gems.dtypes import ATEN_NAMES, FLOATS
from gems.ops.random.philox import (
    SEED_DRAW,
    host_checks,
    philox_key,
    philox_words,
    random_samples,
    uniform24,
    uniform53,
)
from gems.runtime.launch import Launcher, cdiv, next_power_of_2
from gems.spec import OpSpec

MAX_BLOCK_K = 1024  # categories per step of the loop over a row
# Elements per step of a program (rows x categories, samples x categories): short rows share a program,
# and few categories leave room to place more samples at once (at least MIN_BLOCK_SAMPLES).
TILE = 2048
MIN_BLOCK_SAMPLES = 16
_MAX_CATEGORIES = 2**24


@triton.jit
def _exp_key(p, seed, offset, graph, lane, seed_ptr, offset_ptr, WIDE: tl.constexpr):
    """p / E for E ~ Exp(1) drawn at ``lane`` (0 where p is 0; p / 0 = inf where the draw is 0)."""
    r0, r1, _, _ = philox_words(seed, offset, graph, lane, seed_ptr, offset_ptr)
    if WIDE:
        e = 0.0 - tl.log(1.0 - uniform53(r0, r1))
    else:
        e = 0.0 - tl.log(1.0 - uniform24(r0))
    return tl.where(p > 0, p / e, 0.0)


@triton.jit(debug=True)
def _check_kernel(p_ptr, flags_ptr, n_rows, n_cols, stride_row, stride_col, ASSERT: tl.constexpr,
                  BLOCK_R: tl.constexpr, BLOCK_K: tl.constexpr):
    """flags[0] = 1 if a weight is negative, infinite or NaN; flags[1] = 1 if a row sums to 0. ASSERT: assert
    both on the device instead (flags is not touched)."""
    rows = tl.program_id(0).to(tl.int64) * BLOCK_R + tl.arange(0, BLOCK_R)
    row_ok = rows < n_rows
    bad = tl.zeros([BLOCK_R, BLOCK_K], tl.int32)
    total = tl.zeros([BLOCK_R, BLOCK_K], tl.float64)
    for start in range(0, n_cols, BLOCK_K):
        cols = start + tl.arange(0, BLOCK_K)
        inside = row_ok[:, None] & (cols < n_cols)[None, :]
        p = tl.load(p_ptr + rows[:, None] * stride_row + cols[None, :] * stride_col, mask=inside,
                    other=0).to(tl.float64)
        bad = tl.maximum(bad, tl.where((p >= 0) & (p < float("inf")), 0, 1))
        total += p
    zero_rows = tl.where(row_ok & (tl.sum(total, axis=1) == 0), 1, 0)
    if ASSERT:
        tl.device_assert(bad == 0, "probability tensor contains either `inf`, `nan` or element < 0")
        tl.device_assert(zero_rows == 0, "invalid multinomial distribution (sum of probabilities <= 0)")
    else:
        tl.atomic_max(flags_ptr, tl.max(tl.max(bad, axis=1), axis=0))
        tl.atomic_max(flags_ptr + 1, tl.max(zero_rows, axis=0))


@triton.jit(do_not_specialize=["seed", "offset", "graph"])
def _with_replacement_kernel(p_ptr, out_ptr, seed_ptr, offset_ptr, seed: tl.int64, offset: tl.int64,
                             graph: tl.int32, n_cols, n_samples, stride_row, stride_col, WIDE: tl.constexpr,
                             BLOCK_K: tl.constexpr, BLOCK_S: tl.constexpr):
    """One row per program: sample j is the number of prefix sums at or below u_j * total."""
    row = tl.program_id(0).to(tl.int64)
    row_ptr = p_ptr + row * stride_row
    compute = tl.float64 if WIDE else tl.float32
    totals = tl.zeros([BLOCK_K], compute)
    last = tl.zeros([BLOCK_K], tl.int64)
    for start in range(0, n_cols, BLOCK_K):
        cols = start + tl.arange(0, BLOCK_K)
        p = tl.load(row_ptr + cols * stride_col, mask=cols < n_cols, other=0).to(compute)
        totals += p
        last = tl.maximum(last, tl.where(p > 0, cols, 0))
    total = tl.sum(totals, axis=0)
    last_positive = tl.max(last, axis=0)
    for s0 in range(0, n_samples, BLOCK_S):
        s = s0 + tl.arange(0, BLOCK_S)
        r0, r1, _, _ = philox_words(seed, offset, graph, row * n_samples + s, seed_ptr, offset_ptr)
        if WIDE:
            target = uniform53(r0, r1) * total
        else:
            target = uniform24(r0) * total
        count = tl.zeros([BLOCK_S], tl.int64)
        prefix = total * 0
        for start in range(0, n_cols, BLOCK_K):
            cols = start + tl.arange(0, BLOCK_K)
            inside = cols < n_cols
            p = tl.load(row_ptr + cols * stride_col, mask=inside, other=0).to(compute)
            cdf = prefix + tl.cumsum(p, 0)
            count += tl.sum(((cdf[None, :] <= target[:, None]) & inside[None, :]).to(tl.int64), axis=1)
            prefix += tl.sum(p, axis=0)
        tl.store(out_ptr + row * n_samples + s, tl.minimum(count, last_positive), mask=s < n_samples)


@triton.jit(do_not_specialize=["seed", "offset", "graph"])
def _race_kernel(p_ptr, out_ptr, seed_ptr, offset_ptr, seed: tl.int64, offset: tl.int64, graph: tl.int32, n_rows,
                 n_cols, n_samples, stride_row, stride_col, WIDE: tl.constexpr, BLOCK_R: tl.constexpr,
                 BLOCK_K: tl.constexpr):
    """BLOCK_R rows per program: sample j of a row is its category with the largest key p / E below
    sample j - 1's (ties by index)."""
    compute = tl.float64 if WIDE else tl.float32
    rows = tl.program_id(0).to(tl.int64) * BLOCK_R + tl.arange(0, BLOCK_R)
    row_ok = rows < n_rows
    previous_key = tl.full([BLOCK_R], float("inf"), compute)
    previous = tl.full([BLOCK_R], -1, tl.int64)
    for j in range(0, n_samples):
        best_key = tl.full([BLOCK_R], -1.0, compute)
        best = tl.full([BLOCK_R], 0, tl.int64) + n_cols
        for start in range(0, n_cols, BLOCK_K):
            cols = start + tl.arange(0, BLOCK_K)
            inside = row_ok[:, None] & (cols < n_cols)[None, :]
            p = tl.load(p_ptr + rows[:, None] * stride_row + cols[None, :] * stride_col, mask=inside,
                        other=0).to(compute)
            key = _exp_key(p, seed, offset, graph, rows[:, None] * n_cols + cols[None, :], seed_ptr, offset_ptr, WIDE)
            after = inside & ((key < previous_key[:, None])
                              | ((key == previous_key[:, None]) & (cols[None, :] > previous[:, None])))
            key = tl.where(after, key, -1.0)
            chunk_key = tl.max(key, axis=1)
            chunk = tl.min(tl.where(after & (key == chunk_key[:, None]), cols[None, :], n_cols), axis=1)
            better = (chunk_key > best_key) | ((chunk_key == best_key) & (chunk < best))
            best_key = tl.where(better, chunk_key, best_key)
            best = tl.where(better, chunk, best)
        tl.store(out_ptr + rows * n_samples + j, best, mask=row_ok)
        previous_key, previous = best_key, best


_check = Launcher(_check_kernel)
_with_replacement = Launcher(_with_replacement_kernel)
_race = Launcher(_race_kernel)


def _checked(self, num_samples, replacement):
    if self.dim() not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if self.dtype not in FLOATS:
        raise RuntimeError("multinomial only supports floating-point dtypes for input, got: "
                           f"{ATEN_NAMES.get(self.dtype, self.dtype)}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    categories = self.shape[-1]
    if not replacement and num_samples > categories:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if categories > _MAX_CATEGORIES:
        raise RuntimeError("number of categories cannot exceed 2^24")


def _check_weights(rows_view, rows, categories, strides, block_r, block_k):
    """The weights' values: asserted on the device by compiled kernels, else read back (module docstring)."""
    on_host = host_checks()
    flags = torch.zeros(2, dtype=torch.int32, device=rows_view.device) if on_host else rows_view
    _check((cdiv(rows, block_r),), rows_view, flags, rows, categories, *strides, not on_host, block_r, block_k)
    if not on_host:
        return
    bad, zero_row = flags.tolist()
    if bad:
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if zero_row:
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")


def multinomial_out(self, num_samples, replacement=False, *, generator=None, out):
    _checked(self, num_samples, replacement)
    rows_view = self if self.dim() == 2 else self.unsqueeze(0)
    rows, categories = rows_view.shape
    shape = (rows, num_samples) if self.dim() == 2 else (num_samples,)
    if out.shape != shape:
        out.resize_(shape)
    if rows == 0:
        return out
    block_k = min(next_power_of_2(max(categories, 1)), MAX_BLOCK_K)
    block_r = max(1, TILE // block_k)
    strides, wide = (rows_view.stride(0), rows_view.stride(1)), self.dtype == torch.float64
    _check_weights(rows_view, rows, categories, strides, block_r, block_k)
    target = out if out.is_contiguous() else torch.empty(shape, dtype=torch.int64, device=out.device)
    key = philox_key(self.device, generator)
    philox_args = key.kernel_args(self.device)
    if replacement and num_samples > 1:
        block_s = min(next_power_of_2(num_samples), max(MIN_BLOCK_SAMPLES, TILE // block_k))
        _with_replacement((rows,), rows_view, target, *philox_args, categories, num_samples, *strides, wide, block_k,
                          block_s)
    else:
        _race((cdiv(rows, block_r),), rows_view, target, *philox_args, rows, categories, num_samples, *strides, wide,
              block_r, block_k)
    if target is not out:
        out.copy_(target)
    return out


def multinomial(self, num_samples, replacement=False, *, generator=None):
    shape = (self.shape[0], num_samples) if self.dim() == 2 else (num_samples,)
    out = torch.empty(shape if self.dim() in (1, 2) and num_samples > 0 else (0,), dtype=torch.int64,
                      device=self.device)
    return multinomial_out(self, num_samples, replacement, generator=generator, out=out)


SPECS = [
    OpSpec(
        name="multinomial", family="random", impls={"multinomial": multinomial, "multinomial.out": multinomial_out},
        call=torch.multinomial, samples=random_samples("multinomial_samples"), dtypes=FLOATS,
        skips={("nvidia", "*", variant): "ATen's CUDA kernels assert on the device for such weights (with "
               "replacement, or through _assert_async without), which ends the process" for variant in (
                   "replacement-negative-error", "replacement-nan-error", "replacement-zero-row-error",
                   "negative-error", "nan-error", "inf-error", "zero-row-error")},
        aten_decisions=SEED_DRAW,
    ),
]
