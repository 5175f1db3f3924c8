"""triu (and triu_): the upper triangle of the last two dims, ``col - row >= diagonal`` kept. Index
based, so it has its own kernel over (batch, row tile, column tile) rather than the pointwise generator.
"""

import math

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import pointwise_config
from gems.dtypes import ALL
from gems.runtime.launch import Launcher, cdiv, next_power_of_2
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, PerfSpec


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


_triu = Launcher(_triu_kernel)


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


def _samples(dtype, device, quick):
    from gems.spec import Sample
    from gems.testing.samples import make_tensor, shape_for, special_values

    shape = shape_for(quick)
    rows, cols = shape
    make = lambda s=shape: make_tensor(s, dtype, device)
    one = lambda s=shape, *rest: lambda: (make(s), *rest)

    def specials():
        values = special_values(dtype, device)
        return (values.reshape(4 if values.numel() % 4 == 0 else 2, -1),)

    cases = [
        Sample("contiguous", one()),
        Sample("noncontiguous-transposed", lambda: (make((cols, rows)).t(),)),
        Sample("noncontiguous-strided", lambda: (make((rows, 2 * cols))[:, ::2],)),
        Sample("wide", one((rows, 3 * cols))),
        Sample("diagonal-positive", one(shape, 3)),
        Sample("diagonal-negative", one(shape, -4)),
        Sample("diagonal-beyond", one(shape, cols + 5)),
        Sample("diagonal-below-all", one(shape, -rows - 5)),
        Sample("batched", one((3, 4, rows, cols), 1)),
        Sample("batched-permuted", lambda: (make((rows, cols, 3)).permute(2, 0, 1),)),
        Sample("empty", one((0, cols))),
        Sample("empty-batch", one((0, rows, cols))),
        Sample("special-values", specials),
        Sample("1d-error", one((cols,))),
        Sample("inplace", one(shape, 2), expects="triu_", call=lambda x, d: x.triu_(d)),
        Sample("inplace-noncontiguous", lambda: (make((cols, rows)).t(), -1), expects="triu_",
               call=lambda x, d: x.triu_(d)),
        Sample("inplace-batched", one((2, rows, cols)), expects="triu_", call=lambda x: x.triu_()),
    ]
    if dtype.is_floating_point:
        cases.append(Sample("grad", lambda: (make().requires_grad_(),), grad=True))
    return cases


def _perf_inputs(shape, dtype, device):
    from gems.spec import Sample
    from gems.testing.samples import make_tensor

    n = math.prod(shape)
    rows = max(1, math.isqrt(n))
    return Sample("perf", (make_tensor((rows, n // rows), dtype, device),))


def _bytes_moved(sample, result):
    return sample.args[0].numel() * sample.args[0].element_size() + result.numel() * result.element_size()


SPECS = [
    OpSpec(
        name="triu", family="tensor", impls={"triu": triu, "triu_": triu_}, call=torch.triu,
        samples=_samples, dtypes=ALL, tolerance="exact",
        perf=PerfSpec(inputs=_perf_inputs, shapes="pointwise", bytes=_bytes_moved),
    ),
]
