"""The kernels of the elementwise ``_foreach_*`` operators (gems/ops/optim/foreach.py has the host side and the
body convention): ``foreach_kernel`` applies a body to every row of a table, its scalar an argument, a table word
or a 0-d tensor's value; ``values_kernel`` does the same for flat rows whose scalars are a ScalarList of at most
VALUES values passed as kernel arguments."""

from __future__ import annotations

import triton
import triton.language as tl

from gems.ops.optim import multi_tensor as mt
from gems.runtime.launch import Launcher


@triton.jit
def store_cast(value, DTYPE: tl.constexpr):
    """value rounded to DTYPE; float64 reaches fp16/bf16 through fp32, as c10's conversions do."""
    if value.dtype == tl.float64 and DTYPE.primitive_bitwidth == 16:
        value = value.to(tl.float32)
    return value.to(DTYPE)


@triton.jit
def _tile(in0, in1, in2, out, off0, off1, off2, off_out, mask, s, alpha, BODY: tl.constexpr,
          N_IN: tl.constexpr, COMPUTE: tl.constexpr, OUT: tl.constexpr, MASKED: tl.constexpr):
    if MASKED:
        x = tl.load(in0 + off0, mask=mask).to(COMPUTE) if N_IN > 0 else tl.full(off_out.shape, 0, COMPUTE)
        y = tl.load(in1 + off1, mask=mask).to(COMPUTE) if N_IN > 1 else x
        z = tl.load(in2 + off2, mask=mask).to(COMPUTE) if N_IN > 2 else y
        tl.store(out + off_out, store_cast(BODY(x, y, z, s, alpha), OUT), mask=mask)
    else:
        x = tl.load(in0 + off0).to(COMPUTE) if N_IN > 0 else tl.full(off_out.shape, 0, COMPUTE)
        y = tl.load(in1 + off1).to(COMPUTE) if N_IN > 1 else x
        z = tl.load(in2 + off2).to(COMPUTE) if N_IN > 2 else y
        tl.store(out + off_out, store_cast(BODY(x, y, z, s, alpha), OUT))


@triton.jit
def _strided_offsets(row_ptr, word: tl.constexpr, i0, i1, i2, i3):
    return (i0 * tl.load(row_ptr + word) + i1 * tl.load(row_ptr + word + 1) + i2 * tl.load(row_ptr + word + 2)
            + i3 * tl.load(row_ptr + word + 3))


@triton.jit
def foreach_rows(row_ptr, start, numel, s, alpha, BODY: tl.constexpr, N_IN: tl.constexpr, IN0: tl.constexpr,
                  IN1: tl.constexpr, IN2: tl.constexpr, OUT: tl.constexpr, COMPUTE: tl.constexpr,
                  HAS_STRIDED: tl.constexpr, ALIGNED: tl.constexpr, CHUNK_SIZE: tl.constexpr,
                  BLOCK_SIZE: tl.constexpr):
    """A program's chunk of its row (see foreach_kernel), s and alpha in the compute dtype."""
    end = tl.minimum(start + CHUNK_SIZE, numel)
    in0 = mt.typed(row_ptr, 2, IN0, ALIGNED)
    in1 = mt.typed(row_ptr, 2 + (N_IN > 1), IN1, ALIGNED)
    in2 = mt.typed(row_ptr, 2 + 2 * (N_IN > 2), IN2, ALIGNED)
    out = mt.typed(row_ptr, 2 + N_IN, OUT, ALIGNED)
    offs = tl.arange(0, BLOCK_SIZE)
    strided = tl.load(row_ptr + 1) != 0 if HAS_STRIDED else False
    if strided:
        sizes = row_ptr + 4 + N_IN
        s1, s2, s3 = tl.load(sizes + 1), tl.load(sizes + 2), tl.load(sizes + 3)
        for base in range(start, end, BLOCK_SIZE):
            idx = base + offs
            i3 = idx % s3
            rest = idx // s3
            i2 = rest % s2
            rest = rest // s2
            i1 = rest % s1
            i0 = rest // s1
            o0 = _strided_offsets(row_ptr, 8 + N_IN, i0, i1, i2, i3)
            o1 = _strided_offsets(row_ptr, 8 + N_IN + 4 * (N_IN > 1), i0, i1, i2, i3)
            o2 = _strided_offsets(row_ptr, 8 + N_IN + 8 * (N_IN > 2), i0, i1, i2, i3)
            oo = _strided_offsets(row_ptr, 8 + 5 * N_IN, i0, i1, i2, i3)
            _tile(in0, in1, in2, out, o0, o1, o2, oo, idx < end, s, alpha, BODY, N_IN, COMPUTE, OUT, True)
    else:
        full_end = start + (end - start) // BLOCK_SIZE * BLOCK_SIZE
        for base in range(start, full_end, BLOCK_SIZE):  # full tiles: no mask, 128-bit accesses
            _tile(in0 + base, in1 + base, in2 + base, out + base, offs, offs, offs, offs, None, s, alpha, BODY,
                  N_IN, COMPUTE, OUT, False)
        if full_end < end:
            idx = full_end + offs
            _tile(in0, in1, in2, out, idx, idx, idx, idx, idx < end, s, alpha, BODY, N_IN, COMPUTE, OUT, True)


# The float64 bits of scalars are int64 parameters whatever their value: Triton would type a 0 (0.0's bits) as an
# int32 parameter, which a native replay of a plan recorded with 0.0 would fill with the low half of a new value.
@triton.jit(do_not_specialize=["scalar_bits", "alpha_bits"])
def foreach_kernel(table_ptr, n_rows, scalar_bits: tl.int64, alpha_bits: tl.int64, BODY: tl.constexpr,
                    N_IN: tl.constexpr, IN0: tl.constexpr, IN1: tl.constexpr, IN2: tl.constexpr, OUT: tl.constexpr,
                    COMPUTE: tl.constexpr, SCALAR: tl.constexpr, SCALAR_DTYPE: tl.constexpr,
                    HAS_STRIDED: tl.constexpr, ALIGNED: tl.constexpr, WIDTH: tl.constexpr, STEPS: tl.constexpr,
                    CHUNK_SIZE: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    """Row words: numel, strided flag, the N_IN input addresses, the output address, the scalar word
    (float64 bits or a 0-d tensor's address), then for strided rows 4 sizes and 4 strides per operand."""
    row_ptr, start, numel = mt.program_row(table_ptr, n_rows, WIDTH, STEPS, CHUNK_SIZE)
    if SCALAR == 1:
        s = mt.float_word(row_ptr, 3 + N_IN).to(COMPUTE)
    elif SCALAR == 2:
        s = tl.load(mt.typed(row_ptr, 3 + N_IN, SCALAR_DTYPE, False)).to(COMPUTE)
    else:
        s = mt.f64_bits(scalar_bits).to(COMPUTE)
    alpha = mt.f64_bits(alpha_bits).to(COMPUTE)
    foreach_rows(row_ptr, start, numel, s, alpha, BODY, N_IN, IN0, IN1, IN2, OUT, COMPUTE, HAS_STRIDED, ALIGNED,
                  CHUNK_SIZE, BLOCK_SIZE)


# A ScalarList of at most VALUES entries reaches the kernel as arguments, as ATen's CUDA foreach kernels take it
# (their launch metadata): the table then holds each row's position in the lists (fixed for the lists) instead of
# its value, stays the same from call to call, and is found in the device-table cache. Carried in the table, values
# that change every call (Adam's bias corrections when the parameters have taken different numbers of steps) made
# a new table per call, whose upload cost 20-25 us on an H200 (through ATen's copy; 55-75 us before it bypassed
# gems' copy kernels) where ATen's whole call takes 13-27 us. Longer lists keep their values in the table.
VALUES = 16


@triton.jit(do_not_specialize=["alpha_bits", "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11",
                               "v12", "v13", "v14", "v15"])
def values_kernel(table_ptr, n_rows, alpha_bits: tl.int64,
                           v0: tl.int64, v1: tl.int64, v2: tl.int64, v3: tl.int64, v4: tl.int64, v5: tl.int64,
                           v6: tl.int64, v7: tl.int64, v8: tl.int64, v9: tl.int64, v10: tl.int64, v11: tl.int64,
                           v12: tl.int64, v13: tl.int64, v14: tl.int64, v15: tl.int64,
                           BODY: tl.constexpr, N_IN: tl.constexpr, IN0: tl.constexpr, IN1: tl.constexpr,
                           IN2: tl.constexpr, OUT: tl.constexpr, COMPUTE: tl.constexpr, ALIGNED: tl.constexpr,
                           WIDTH: tl.constexpr, STEPS: tl.constexpr, CHUNK_SIZE: tl.constexpr,
                           BLOCK_SIZE: tl.constexpr):
    """foreach_kernel's flat rows with the scalar of row i (word 3 + N_IN: its position i in the lists) in
    argument v<i>, float64 bits (the arguments past the list's length are unused)."""
    row_ptr, start, numel = mt.program_row(table_ptr, n_rows, WIDTH, STEPS, CHUNK_SIZE)
    i = tl.load(row_ptr + 3 + N_IN)
    bits = tl.where(i == 1, v1, v0)
    bits = tl.where(i == 2, v2, bits)
    bits = tl.where(i == 3, v3, bits)
    bits = tl.where(i == 4, v4, bits)
    bits = tl.where(i == 5, v5, bits)
    bits = tl.where(i == 6, v6, bits)
    bits = tl.where(i == 7, v7, bits)
    bits = tl.where(i == 8, v8, bits)
    bits = tl.where(i == 9, v9, bits)
    bits = tl.where(i == 10, v10, bits)
    bits = tl.where(i == 11, v11, bits)
    bits = tl.where(i == 12, v12, bits)
    bits = tl.where(i == 13, v13, bits)
    bits = tl.where(i == 14, v14, bits)
    bits = tl.where(i == 15, v15, bits)
    s = mt.f64_bits(bits).to(COMPUTE)
    alpha = mt.f64_bits(alpha_bits).to(COMPUTE)
    foreach_rows(row_ptr, start, numel, s, alpha, BODY, N_IN, IN0, IN1, IN2, OUT, COMPUTE, False, ALIGNED,
                  CHUNK_SIZE, BLOCK_SIZE)


mt.mark(foreach_kernel)
mt.mark(values_kernel)
launch = Launcher(foreach_kernel)
launch_with_values = Launcher(values_kernel)
