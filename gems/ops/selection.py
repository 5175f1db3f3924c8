"""Selection: where, masked_fill (Scalar and Tensor values, in-place), triu.

where and masked_fill are pointwise (the condition or mask is loaded as it is, only the values
take part in type promotion). triu is index based: a value survives where ``col - row >=
diagonal``, so it has its own kernel over (batch, row tile, column tile).
"""

import math
import warnings

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import PointwiseOp, Promotion, pointwise_config
from gems.ops.creation import checked_scalar
from gems.runtime.launch import Launcher, cdiv, next_power_of_2
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, PerfSpec, Sample
from gems.testing.perf_inputs import tensor_bytes
from gems.testing.samples import make_tensor, shape_for, special_values
from gems.testing.samples_extra import masked_perf, other_device

ALL_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.int8, torch.int16, torch.int32,
              torch.int64, torch.uint8, torch.bool)
_TYPE_NAMES = {torch.float16: "Half", torch.bfloat16: "BFloat16", torch.float32: "Float", torch.float64: "Double",
               torch.int8: "Char", torch.int16: "Short", torch.int32: "Int", torch.int64: "Long",
               torch.uint8: "Byte", torch.bool: "Bool"}
# ATen's masked_fill message spells the mask dtype the C++ way.
_C_TYPE_NAMES = {torch.float16: "c10::Half", torch.bfloat16: "c10::BFloat16", torch.float32: "float",
                 torch.float64: "double", torch.int8: "signed char", torch.int16: "short", torch.int32: "int",
                 torch.int64: "long int", torch.uint8: "unsigned char"}
_INT32_LIMIT = 2**31 - 1


# --------------------------------------------------------------------------- kernels


@triton.jit
def _where(condition, x, y):
    return tl.where(condition != 0, x, y)  # a uint8 condition counts as nonzero, as in ATen


@triton.jit
def _masked_fill(x, mask, value):
    return tl.where(mask, value, x)


@triton.jit
def _triu_kernel(x_ptr, out_ptr, n_rows, n_cols, tiles_n, tiles_per_matrix,
                 stride_xb, stride_xm, stride_xn, stride_ob, stride_om, stride_on, diagonal,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, INPLACE: tl.constexpr):
    """out[b, i, j] = x[b, i, j] where j - i >= diagonal, else 0; one program per (matrix, tile).

    In place (x is out), only the zeros are written.
    """
    pid = tl.program_id(0).to(tl.int64)
    batch = pid // tiles_per_matrix
    tile = pid % tiles_per_matrix
    offs_m = (tile // tiles_n) * BLOCK_M + tl.arange(0, BLOCK_M)[:, None]
    offs_n = (tile % tiles_n) * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]
    inside = (offs_m < n_rows) & (offs_n < n_cols)
    keep = (offs_n - offs_m) >= diagonal
    out = out_ptr + batch * stride_ob + offs_m * stride_om + offs_n * stride_on
    if INPLACE:
        tl.store(out, tl.full([BLOCK_M, BLOCK_N], 0, out_ptr.dtype.element_ty), mask=inside & (keep == 0))
    else:
        x = tl.load(x_ptr + batch * stride_xb + offs_m * stride_xm + offs_n * stride_xn, mask=inside & keep, other=0)
        tl.store(out, x, mask=inside)


where_op = PointwiseOp("where", _where, operands=3, promote_operands=(1, 2))
# The fill value is converted to self's dtype first (checked_scalar), so the common dtype is self's.
masked_fill_op = PointwiseOp("masked_fill", _masked_fill, operands=3, promote_operands=(0, 2),
                             promotion=Promotion.KEEP_FIRST)
_triu = Launcher(_triu_kernel)


# --------------------------------------------------------------------------- where


def _check_condition(condition):
    if condition.dtype is torch.uint8:
        warnings.warn("where received a uint8 condition tensor. This behavior is deprecated and will be removed in a "
                      "future version of PyTorch. Use a boolean condition instead.", UserWarning, stacklevel=2)
    elif condition.dtype is not torch.bool:
        raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{_TYPE_NAMES.get(condition.dtype, condition.dtype)}")


def where(condition, self, other):
    _check_condition(condition)
    return where_op(condition, self, other)


def where_out(condition, self, other, *, out):
    _check_condition(condition)
    want = where_op.result_dtypes([condition, self, other])[1][0]
    if out.dtype != want:  # where's out= must be exactly the result dtype
        raise RuntimeError(f"Expected out type to be {_TYPE_NAMES.get(want, want)} but got "
                           f"{_TYPE_NAMES.get(out.dtype, out.dtype)}")
    return where_op(condition, self, other, out=out)


# --------------------------------------------------------------------------- masked_fill


def _fill_value(self, mask, value):
    if mask.dtype is not torch.bool:
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_C_TYPE_NAMES.get(mask.dtype, mask.dtype)}")
    if isinstance(value, torch.Tensor):
        if value.dim() != 0:
            raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value.dim()} dimension(s).")
        value = value.item()  # ATen reads a value tensor as a Scalar too
    return checked_scalar(value, self.dtype)


def masked_fill(self, mask, value):
    return masked_fill_op(self, mask, _fill_value(self, mask, value))


def masked_fill_(self, mask, value):
    return masked_fill_op(self, mask, _fill_value(self, mask, value), out=self, inplace=True)


# --------------------------------------------------------------------------- triu


def _batch_stride(t):
    """The stride that walks the flattened batch dims of ``t`` (all but the last two), or None
    when they cannot be walked with one stride."""
    dims = [(n, s) for n, s in zip(t.shape[:-2], t.stride()[:-2]) if n != 1]
    if not dims:
        return 0
    for (_, s0), (n1, s1) in zip(dims, dims[1:]):
        if s0 != s1 * n1:
            return None
    return dims[-1][1]


def _triu_launch(x, out, diagonal, inplace):
    rows, cols = x.shape[-2], x.shape[-1]
    n_batch = math.prod(x.shape[:-2])
    if out.numel() == 0:
        return out
    stride_xb, stride_ob = _batch_stride(x), _batch_stride(out)
    if stride_xb is None or stride_ob is None:
        raise Fallback("batch dimensions of this layout cannot be walked with one stride")
    block, num_warps = pointwise_config(rows * cols, x.dtype.itemsize)
    block_n = min(next_power_of_2(cols), block)
    block_m = max(1, min(next_power_of_2(rows), block // block_n))
    tiles_n = cdiv(cols, block_n)
    tiles = cdiv(rows, block_m) * tiles_n
    _triu((n_batch * tiles,), x, out, rows, cols, tiles_n, tiles, stride_xb, x.stride(-2), x.stride(-1),
          stride_ob, out.stride(-2), out.stride(-1), diagonal, block_m, block_n, inplace, num_warps=num_warps)
    return out


def _check_triu(self):
    if self.dim() < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    if self.is_complex():
        raise Fallback("complex dtype")


def triu(self, diagonal=0):
    _check_triu(self)
    if _batch_stride(self) is None:
        raise Fallback("batch dimensions of this layout cannot be walked with one stride")
    return _triu_launch(self, torch.empty(self.shape, dtype=self.dtype, device=self.device), diagonal, False)


def triu_(self, diagonal=0):
    _check_triu(self)
    if _batch_stride(self) is None:
        raise Fallback("batch dimensions of this layout cannot be walked with one stride")
    return _triu_launch(self, self, diagonal, True)


# --------------------------------------------------------------------------- samples


def _where_samples(dtype, device, quick):
    shape = shape_for(quick)
    rows, cols = shape
    make = lambda s, d=dtype: make_tensor(s, d, device)
    cond = lambda s: make_tensor(s, torch.bool, device)
    other = torch.float64 if dtype != torch.float64 else torch.int32
    specials = special_values(dtype, device)
    return [
        Sample("contiguous", (cond(shape), make(shape), make(shape))),
        Sample("noncontiguous-transposed", (cond((cols, rows)).t(), make((cols, rows)).t(), make(shape))),
        Sample("noncontiguous-strided", (cond((rows, 2 * cols))[:, ::2], make(shape), make((rows, 2 * cols))[:, 1::2])),
        Sample("broadcast", (cond((rows, 1)), make((1, cols)), make(shape))),
        Sample("broadcast-condition", (cond(shape), make((cols,)), make((rows, 1)))),
        Sample("0d", (cond(()), make(()), make(()))),
        Sample("0d-operands", (cond(shape), make(()), make(()))),
        Sample("empty", (cond((0, cols)), make((0, cols)), make((0, cols)))),
        Sample("special-values", (cond(specials.shape), specials, specials.flip(0))),
        Sample("scalar-other", (cond(shape), make(shape)), call=lambda c, x: torch.where(c, x, 2)),
        Sample("type-promotion", (cond(shape), make(shape), make(shape, other))),
        Sample("uint8-condition", (cond(shape).to(torch.uint8) * 3, make(shape), make(shape))),
        Sample("float-condition-error", (make(shape, torch.float32), make(shape), make(shape))),
        Sample("broadcast-error", (cond(shape), make((3,)), make(shape))),
        Sample("out", (cond(shape), make(shape), make(shape), torch.empty(0, dtype=dtype, device=device)),
               expects="where.self_out", call=lambda c, x, y, o: torch.where(c, x, y, out=o)),
        Sample("out-noncontiguous", (cond(shape), make(shape), make(shape),
                                     torch.empty((rows, 2 * cols), dtype=dtype, device=device)[:, ::2]),
               expects="where.self_out", call=lambda c, x, y, o: torch.where(c, x, y, out=o)),
        Sample("out-wrong-dtype", (cond(shape), make(shape), make(shape)),
               call=lambda c, x, y: torch.where(c, x, y, out=torch.empty(0, dtype=other, device=x.device))),
        Sample("out-wrong-device", (cond(shape), make(shape), make(shape)),
               call=lambda c, x, y: torch.where(c, x, y, out=torch.empty(0, dtype=x.dtype,
                                                                         device=other_device(x.device)))),
        Sample("out-overlap-error", (cond((cols, cols)), make((cols, cols)), make((cols, cols))),
               call=lambda c, x, y: torch.where(c, x, y, out=x.t())),
        Sample("method", (make(shape), cond(shape), make(shape)), call=lambda x, c, y: x.where(c, y)),
    ] + ([Sample("grad", (cond(shape), make(shape).requires_grad_(), make(shape).requires_grad_()), grad=True)]
         if dtype.is_floating_point else [])


def _masked_fill_samples(dtype, device, quick):
    shape = shape_for(quick)
    rows, cols = shape
    make = lambda s, d=dtype: make_tensor(s, d, device)
    mask = lambda s: make_tensor(s, torch.bool, device)
    value = -2.5 if dtype.is_floating_point else (True if dtype == torch.bool else 7)
    tensor_value = torch.tensor(value, dtype=dtype, device=device)
    big = {torch.float16: 1e6, torch.bfloat16: 1e39, torch.float32: 1e39, torch.int8: 300, torch.uint8: -300,
           torch.int16: 70000, torch.int32: 2**40}.get(dtype)
    cases = [
        Sample("contiguous", (make(shape), mask(shape), value)),
        Sample("noncontiguous-transposed", (make((cols, rows)).t(), mask((cols, rows)).t(), value)),
        Sample("noncontiguous-strided", (make((rows, 2 * cols))[:, ::2], mask(shape), value)),
        Sample("broadcast-mask", (make(shape), mask((cols,)), value)),
        Sample("broadcast-self", (make((rows, 1)), mask(shape), value)),
        Sample("0d", (make(()), mask(()), value)),
        Sample("empty", (make((0, cols)), mask((0, cols)), value)),
        Sample("special-values", (special_values(dtype, device), mask(special_values(dtype, device).shape), value)),
        Sample("float-value", (make(shape), mask(shape), 2.75)),
        Sample("int-value", (make(shape), mask(shape), 3)),
        Sample("bool-value", (make(shape), mask(shape), True)),
        Sample("nan-value", (make(shape), mask(shape), float("nan"))),
        Sample("negative-value", (make(shape), mask(shape), -1)),
        Sample("tensor-value", (make(shape), mask(shape), tensor_value), expects="masked_fill.Tensor"),
        Sample("tensor-value-other-dtype", (make(shape), mask(shape), torch.tensor(1.75, dtype=torch.float64,
                                                                                     device=device)),
               expects="masked_fill.Tensor"),
        Sample("tensor-value-1d-error", (make(shape), mask(shape), tensor_value.reshape(1))),
        Sample("float-mask-error", (make(shape), make(shape, torch.float32), value)),
        Sample("uint8-mask-error", (make(shape), mask(shape).to(torch.uint8), value)),
        Sample("broadcast-error", (make(shape), mask((3,)), value)),
        Sample("inplace", (make(shape), mask(shape), value), expects="masked_fill_.Scalar",
               call=lambda x, m, v: x.masked_fill_(m, v)),
        Sample("inplace-noncontiguous", (make((cols, rows)).t(), mask(shape), value), expects="masked_fill_.Scalar",
               call=lambda x, m, v: x.masked_fill_(m, v)),
        Sample("inplace-tensor-value", (make(shape), mask(shape), tensor_value), expects="masked_fill_.Tensor",
               call=lambda x, m, v: x.masked_fill_(m, v)),
        Sample("inplace-broadcast-error", (make((rows, 1)), mask(shape), value),
               call=lambda x, m, v: x.masked_fill_(m, v)),
    ]
    if big is not None:
        cases.append(Sample("overflow-error", (make(shape), mask(shape), big)))
    if dtype.is_floating_point:
        cases.append(Sample("grad", (make(shape).requires_grad_(), mask(shape), value), grad=True))
    return cases


def _triu_samples(dtype, device, quick):
    shape = shape_for(quick)
    rows, cols = shape
    make = lambda s: make_tensor(s, dtype, device)
    cases = [
        Sample("contiguous", (make(shape),)),
        Sample("noncontiguous-transposed", (make((cols, rows)).t(),)),
        Sample("noncontiguous-strided", (make((rows, 2 * cols))[:, ::2],)),
        Sample("wide", (make((rows, 3 * cols)),)),
        Sample("diagonal-positive", (make(shape), 3)),
        Sample("diagonal-negative", (make(shape), -4)),
        Sample("diagonal-beyond", (make(shape), cols + 5)),
        Sample("diagonal-below-all", (make(shape), -rows - 5)),
        Sample("batched", (make((3, 4, rows, cols)), 1)),
        Sample("batched-permuted", (make((rows, cols, 3)).permute(2, 0, 1),)),
        Sample("empty", (make((0, cols)),)),
        Sample("empty-batch", (make((0, rows, cols)),)),
        Sample("special-values", (special_values(dtype, device).reshape(4, -1) if special_values(
            dtype, device).numel() % 4 == 0 else special_values(dtype, device).reshape(2, -1),)),
        Sample("1d-error", (make((cols,)),)),
        Sample("inplace", (make(shape), 2), expects="triu_", call=lambda x, d: x.triu_(d)),
        Sample("inplace-noncontiguous", (make((cols, rows)).t(), -1), expects="triu_", call=lambda x, d: x.triu_(d)),
        Sample("inplace-batched", (make((2, rows, cols)),), expects="triu_", call=lambda x: x.triu_()),
    ]
    if dtype.is_floating_point:
        cases.append(Sample("grad", (make(shape).requires_grad_(),), grad=True))
    return cases


def _triu_perf():
    def inputs(shape, dtype, device):
        n = math.prod(shape)
        rows = max(1, math.isqrt(n))
        return Sample("perf", (make_tensor((rows, n // rows), dtype, device),))

    def bytes_moved(sample, result):
        return tensor_bytes(sample.args[0], result)

    return PerfSpec(inputs=inputs, shapes="pointwise", bytes=bytes_moved)


SPECS = [
    OpSpec(
        name="where", family="pointwise", impls={"where.self": where, "where.self_out": where_out},
        call=torch.where, samples=_where_samples, dtypes=ALL_DTYPES, perf=masked_perf(),
    ),
    OpSpec(
        name="masked_fill", family="pointwise",
        impls={"masked_fill.Scalar": masked_fill, "masked_fill.Tensor": masked_fill,
               "masked_fill_.Scalar": masked_fill_, "masked_fill_.Tensor": masked_fill_},
        call=torch.masked_fill, samples=_masked_fill_samples, dtypes=ALL_DTYPES, perf=masked_perf(value=2.0),
    ),
    OpSpec(
        name="triu", family="tensor", impls={"triu": triu, "triu_": triu_}, call=torch.triu,
        samples=_triu_samples, dtypes=ALL_DTYPES, tolerance="exact", perf=_triu_perf(),
    ),
]
