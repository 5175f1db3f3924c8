"""cat (and cat.out): tensors joined along ``dim``, promoted to their common dtype (or out's).

In the output's memory order, the dims before ``dim`` are rows and ``dim`` with the dims after it are
columns: every input is then a (rows, its columns) matrix copied into its own band of columns, and one
launch copies up to SLOTS inputs, each program finding its input from the tile ranges (one launch per
SLOTS inputs, never one per input; a Llama decode step's KV-cache cats take two inputs). An input whose
rows or columns cannot be walked with one stride each (a transposed input joined along dim 0) is copied
by the family's strided copy kernel into its band instead, one launch for it.

Tiles: an input narrower than the block is copied a few whole rows per program; a wider one in tiles of
BLOCK consecutive elements of its row-major order, each crossing at most one row end. Either way an
input's program count is affine-floor in its sizes (cdiv(rows, rows per program), cdiv(rows * columns,
BLOCK)), never rows x column tiles: a decode loop's growing KV cache then replays from one size-generic
plan (gems/native/generic.py), and no program is left mostly empty at the end of each row.

ATen's rules kept: a 1-d empty tensor (the legacy ``torch.empty(0)``) is skipped whatever its shape and
takes no part in the checks, but in the dtype; the output is channels-last when every input suggests it;
out= accepts any dtype the result can be cast to (TypeError otherwise) and may not overlap an input.
"""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import SUPPORTED_DTYPES, pointwise_config
from gems.dtypes import ALL, ATEN_NAMES
from gems.ops.shape.remap import INT32_LIMIT, dims_of, remap
from gems.ops.shape.shared import check_no_overlap, shape_perf, shape_samples, suggest_memory_format, wrap_dim
from gems.runtime.launch import Launcher, cdiv, next_power_of_2
from gems.runtime.registration import Fallback
from gems.spec import OpSpec

SLOTS = 8  # inputs per launch: a kernel argument list of 8 x 6 values stays short to prepare per call


@triton.jit
def _copy_slot(pid, start, end, x_ptr, out_ptr, n_rows, n_cols, stride_r, stride_c, offset, stride_out,
               BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    """Programs start..end-1 copy x (n_rows x n_cols, strides stride_r, stride_c) to out + offset. Each program
    copies BLOCK_R whole rows (BLOCK_C >= n_cols), or for BLOCK_R == 0 the next BLOCK_C elements of x in
    row-major order (n_cols >= BLOCK_C: a tile crosses at most one row end)."""
    if (pid >= start) & (pid < end):
        tile = pid - start
        if BLOCK_R == 0:
            first = tile * BLOCK_C
            row = first // n_cols
            cols = first - row * n_cols + tl.arange(0, BLOCK_C)
            wrapped = cols >= n_cols
            rows = tl.where(wrapped, row + 1, row)
            cols = tl.where(wrapped, cols - n_cols, cols)
            mask = rows < n_rows
        else:
            rows = (tile * BLOCK_R + tl.arange(0, BLOCK_R))[:, None]
            cols = tl.arange(0, BLOCK_C)[None, :]
            mask = (rows < n_rows) & (cols < n_cols)
        x = tl.load(x_ptr + rows * stride_r + cols * stride_c, mask=mask)
        tl.store(out_ptr + offset + rows * stride_out + cols, x.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _cat_kernel(out_ptr, n_rows, stride_out,
                x0_ptr, cols0, stride_r0, stride_c0, offset0, end0, x1_ptr, cols1, stride_r1, stride_c1, offset1, end1,
                x2_ptr, cols2, stride_r2, stride_c2, offset2, end2, x3_ptr, cols3, stride_r3, stride_c3, offset3, end3,
                x4_ptr, cols4, stride_r4, stride_c4, offset4, end4, x5_ptr, cols5, stride_r5, stride_c5, offset5, end5,
                x6_ptr, cols6, stride_r6, stride_c6, offset6, end6, x7_ptr, cols7, stride_r7, stride_c7, offset7, end7,
                N: tl.constexpr, INT64: tl.constexpr,
                BLOCK_R0: tl.constexpr, BLOCK_C0: tl.constexpr, BLOCK_R1: tl.constexpr, BLOCK_C1: tl.constexpr,
                BLOCK_R2: tl.constexpr, BLOCK_C2: tl.constexpr, BLOCK_R3: tl.constexpr, BLOCK_C3: tl.constexpr,
                BLOCK_R4: tl.constexpr, BLOCK_C4: tl.constexpr, BLOCK_R5: tl.constexpr, BLOCK_C5: tl.constexpr,
                BLOCK_R6: tl.constexpr, BLOCK_C6: tl.constexpr, BLOCK_R7: tl.constexpr, BLOCK_C7: tl.constexpr):
    """N inputs (N <= 8) into their column bands of out (rows of stride_out, columns contiguous); input k
    owns programs end(k-1)..end(k)-1."""
    pid = tl.program_id(0)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        pid = pid.to(tl.int64)
    _copy_slot(pid, 0, end0, x0_ptr, out_ptr, n_rows, cols0, stride_r0, stride_c0, offset0, stride_out,
               BLOCK_R0, BLOCK_C0)
    if N > 1:
        _copy_slot(pid, end0, end1, x1_ptr, out_ptr, n_rows, cols1, stride_r1, stride_c1, offset1, stride_out,
                   BLOCK_R1, BLOCK_C1)
    if N > 2:
        _copy_slot(pid, end1, end2, x2_ptr, out_ptr, n_rows, cols2, stride_r2, stride_c2, offset2, stride_out,
                   BLOCK_R2, BLOCK_C2)
    if N > 3:
        _copy_slot(pid, end2, end3, x3_ptr, out_ptr, n_rows, cols3, stride_r3, stride_c3, offset3, stride_out,
                   BLOCK_R3, BLOCK_C3)
    if N > 4:
        _copy_slot(pid, end3, end4, x4_ptr, out_ptr, n_rows, cols4, stride_r4, stride_c4, offset4, stride_out,
                   BLOCK_R4, BLOCK_C4)
    if N > 5:
        _copy_slot(pid, end4, end5, x5_ptr, out_ptr, n_rows, cols5, stride_r5, stride_c5, offset5, stride_out,
                   BLOCK_R5, BLOCK_C5)
    if N > 6:
        _copy_slot(pid, end5, end6, x6_ptr, out_ptr, n_rows, cols6, stride_r6, stride_c6, offset6, stride_out,
                   BLOCK_R6, BLOCK_C6)
    if N > 7:
        _copy_slot(pid, end6, end7, x7_ptr, out_ptr, n_rows, cols7, stride_r7, stride_c7, offset7, stride_out,
                   BLOCK_R7, BLOCK_C7)


_cat = Launcher(_cat_kernel)


def _memory_format(tensors):
    """ATen's cat_compute_output_memory_format: channels-last only when every input suggests it."""
    fmt = suggest_memory_format(tensors[0])
    if fmt is torch.contiguous_format or any(suggest_memory_format(t) is not fmt for t in tensors[1:]):
        return torch.contiguous_format
    return fmt


def _check(tensors, dim):
    """ATen's checks, in its order: (dim wrapped, result dtype, the inputs not skipped, the result's shape). A
    1-d empty tensor (the legacy ``torch.empty(0)``) is skipped: it takes part in the dtype only."""
    if len(tensors) == 0:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if t.dim() == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    kept = [(i, t) for i, t in enumerate(tensors) if t.dim() != 1 or t.shape[0]]
    if kept:
        dim = wrap_dim(dim, kept[0][1].dim())
    device, dtype = tensors[0].device, tensors[0].dtype
    for t in tensors[1:]:
        if t.device != device:  # unreached on the interpreter: one device
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                               f"{device} and {t.device}!")
        if t.dtype is not dtype:
            dtype = torch.promote_types(dtype, t.dtype)
    if not kept:
        return dim, dtype, [], [0]
    first = kept[0][1].shape
    size = 0
    for i, t in kept:
        shape = t.shape
        if len(shape) != len(first):
            raise RuntimeError(f"Tensors must have same number of dimensions: got {len(first)} and {len(shape)}")
        if shape != first:
            for d, (a, b) in enumerate(zip(first, shape)):
                if d != dim and a != b:
                    raise RuntimeError(f"Sizes of tensors must match except in dimension {dim}. Expected size {a} "
                                       f"but got size {b} for tensor number {i} in the list.")
        size += shape[dim]
    result = list(first)
    result[dim] = size
    if dtype not in SUPPORTED_DTYPES or any(t.dtype not in SUPPORTED_DTYPES for t in tensors):
        raise Fallback(f"dtype {dtype} not handled by gems copy kernels")
    return dim, dtype, [t for _, t in kept], result


def _merged_stride(shape, strides, dims):
    """The one stride that walks ``dims`` (outer to inner) of a tensor as a single dim, or None."""
    stride = span = None
    for d in reversed(dims):
        n = shape[d]
        if n == 1:
            continue
        s = strides[d]
        if stride is None:
            stride = s
        elif s != span:
            return None
        span = s * n
    return 0 if stride is None else stride


def _join(inputs, out, dim):
    """Copy the inputs into out along dim (every check made)."""
    numel = out.numel()
    if numel == 0:
        return out
    shape, strides = out.shape, out.stride()
    order = sorted(range(len(shape)), key=lambda d: -strides[d])  # out's memory order (stable)
    p = order.index(dim)
    rows_dims, cols_dims = order[:p], order[p:]
    stride_out = _merged_stride(shape, strides, rows_dims)
    flat_out = stride_out is not None and _merged_stride(shape, strides, cols_dims) in (0, 1)
    n_rows = 1
    for d in rows_dims:
        n_rows *= shape[d]
    block, num_warps = pointwise_config(numel, out.element_size())
    slots, offset, int64 = [], 0, numel > INT32_LIMIT
    for x in inputs:
        size = x.shape[dim]
        if size:
            x_shape, x_strides = x.shape, x.stride()
            stride_r = _merged_stride(x_shape, x_strides, rows_dims) if flat_out else None
            stride_c = _merged_stride(x_shape, x_strides, cols_dims) if stride_r is not None else None
            if stride_c is None:
                band = out.narrow(dim, offset, size)
                remap(x, band, dims_of(x, band))
            else:
                n_cols = x.numel() // n_rows
                int64 = int64 or (n_rows - 1) * stride_r + (n_cols - 1) * stride_c > INT32_LIMIT
                slots.append((x, n_cols, stride_r, stride_c, offset * strides[dim]))
        offset += size
    for start in range(0, len(slots), SLOTS):
        _launch(out, n_rows, stride_out, slots[start:start + SLOTS], block, num_warps, int64)
    return out


def _launch(out, n_rows, stride_out, slots, block, num_warps, int64):
    args, blocks, end = [], [], 0
    rows_pow2 = next_power_of_2(n_rows)
    for x, n_cols, stride_r, stride_c, offset in slots:
        if n_cols >= block:  # tiles of `block` elements in row-major order: none half empty at a row's end
            block_r, block_c = 0, block
            end += cdiv(n_rows * n_cols, block)
        else:  # whole rows
            block_c = next_power_of_2(n_cols)
            block_r = min(max(1, block // block_c), rows_pow2)
            end += cdiv(n_rows, block_r)
        args += (x, n_cols, stride_r, stride_c, offset, end)
        blocks += (block_r, block_c)
    for _ in range(SLOTS - len(slots)):
        args += (out, 0, 0, 0, 0, end)
        blocks += (1, 1)
    _cat((end,), out, n_rows, stride_out, *args, len(slots), int64, *blocks, num_warps=num_warps)


def cat(tensors, dim=0):
    dim, dtype, inputs, shape = _check(tensors, dim)
    out = torch.empty(shape, dtype=dtype, device=tensors[0].device, memory_format=_memory_format(tensors))
    return _join(inputs, out, dim)


def cat_out(tensors, dim=0, *, out):
    dim, dtype, inputs, shape = _check(tensors, dim)
    if not torch.can_cast(dtype, out.dtype):
        raise TypeError(f"torch.cat(): input types can't be cast to the desired output type "
                        f"{ATEN_NAMES.get(out.dtype, out.dtype)}")
    if out.device != tensors[0].device:  # unreached on the interpreter: one device
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                           f"{tensors[0].device} and {out.device}!")
    if out.dtype not in SUPPORTED_DTYPES:
        raise Fallback(f"out= of dtype {out.dtype}, not handled by gems copy kernels")
    if list(out.shape) != shape:
        out.resize_(shape, memory_format=_memory_format(tensors))
    check_no_overlap(out, tensors)
    return _join(inputs, out, dim)


SPECS = [
    OpSpec(
        name="cat", family="tensor", impls={"cat": cat, "cat.out": cat_out}, call=torch.cat,
        samples=shape_samples("cat_samples"), dtypes=ALL, tolerance="exact", perf=shape_perf("cat"),
    ),
]
