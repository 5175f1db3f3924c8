"""nonzero: ``nonzero`` and ``nonzero.out`` (torch.nonzero, Tensor.nonzero; torch.argwhere and
``as_tuple=True`` decompose into ``nonzero``): the indices of the elements that are not zero, an int64
(count, ndim) tensor in row-major order of the elements. NaN is not zero; -0.0 is.

Compaction as in scan_scatter.py: a count per block, gems' cumsum of the counts (the total read to the
host to size the result, as ATen does), then a kernel that ranks each block's nonzero elements and
writes their coordinates. The result is laid out as ATen's CPU and CUDA kernels lay it out, (ndim,
count) memory transposed to (count, ndim): each dimension's coordinates are contiguous.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from gems.dtypes import ALL
from gems.ops.compaction.scan_scatter import (
    BLOCK,
    NUM_WARPS,
    block_ends,
    block_ranks,
    comparable_view,
    element_flags,
    grid,
)
from gems.runtime.device_tables import key_table
from gems.runtime.launch import Launcher
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, PerfSpec

# --------------------------------------------------------------------------- kernels


@triton.jit
def _nonzero_kernel(
    x_ptr, ends_ptr, shape_ptr, out_ptr,
    n, stride_on, stride_od,
    NDIM: tl.constexpr, BLOCK: tl.constexpr,
):
    """out[pos, d] = coordinate d of the pos-th nonzero element of x (contiguous, n elements), for this
    program's BLOCK elements; shape: x's sizes (int64, NDIM of them)."""
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    flags = element_flags(x_ptr, offs, n, False)
    pos = block_ranks(ends_ptr, flags, pid)
    keep = flags != 0
    rest = offs
    for i in tl.static_range(NDIM):  # innermost dimension first
        size = tl.load(shape_ptr + (NDIM - 1 - i))
        tl.store(out_ptr + pos * stride_on + (NDIM - 1 - i) * stride_od, rest % size, mask=keep)
        rest = rest // size


_launcher = Launcher(_nonzero_kernel)

# --------------------------------------------------------------------------- ATen overloads


def _nonzero(x, out=None):
    if x.dtype not in ALL:
        raise Fallback(f"nonzero of {x.dtype} is left to ATen")
    if out is not None:
        if out.dtype != torch.int64:
            raise RuntimeError(f"nonzero: Expected out tensor to have scalar type Long but got scalar type "
                               f"{out.dtype}")
        if out.device != x.device:  # unreached on the interpreter: one device
            raise RuntimeError(f"Expected out tensor to have device {x.device}, but got {out.device} instead")
    flat, ndim = comparable_view(x), x.dim()
    n = flat.numel()
    ends, total = block_ends(flat, False) if n else (None, 0)
    if out is None:
        result = torch.empty((ndim, total), dtype=torch.int64, device=x.device).t()
    else:
        result = out
        if tuple(out.shape) != (total, ndim):
            out.resize_((total, ndim))
    if total and ndim:
        shape = key_table(x.shape, x.device)
        _launcher(grid(n), flat, ends, shape, result, n, result.stride(0), result.stride(1), ndim, BLOCK,
                  num_warps=NUM_WARPS)
    return result


def nonzero(self):
    return _nonzero(self)


def nonzero_out(self, *, out):
    return _nonzero(self, out)


# --------------------------------------------------------------------------- samples


def _samples(dtype, device, quick):
    from gems.spec import Sample
    from gems.testing.samples import make_tensor, special_values

    def sparse(*shape, density=0.5):
        x = make_tensor(shape, dtype, device)
        return torch.where(torch.rand(shape, device=device) < density, x, torch.zeros((), dtype=dtype, device=device))

    long = 2500 if quick else 300007  # more than one block of scan_scatter.BLOCK
    cases = [
        Sample("contiguous", lambda: (sparse(13, 17),)),
        Sample("1d-long", lambda: (sparse(long),)),
        Sample("1d-long-dense", lambda: (sparse(long, density=0.97),)),
        Sample("1d-long-rare", lambda: (sparse(long, density=0.002),)),
        Sample("3d", lambda: (sparse(3, 5, 7),)),
        Sample("5d", lambda: (sparse(2, 3, 1, 4, 5),)),
        Sample("noncontiguous-transposed", lambda: (sparse(17, 13).t(),)),
        Sample("noncontiguous-strided", lambda: (sparse(9, 22)[:, ::2],)),
        Sample("0d-nonzero", lambda: (make_tensor((), dtype, device).fill_(1),)),
        Sample("0d-zero", lambda: (torch.zeros((), dtype=dtype, device=device),)),
        Sample("empty", lambda: (make_tensor((0, 5), dtype, device),)),
        Sample("all-zero", lambda: (torch.zeros((4, 6), dtype=dtype, device=device),)),
        Sample("all-nonzero", lambda: (torch.ones((4, 6), dtype=dtype, device=device),)),
        Sample("special", lambda: (special_values(dtype, device),)),
        Sample("out", lambda: (sparse(7, 9),), call=lambda x: torch.nonzero(x, out=torch.empty(0, dtype=torch.int64,
                                                                                              device=x.device)),
               expects="nonzero.out"),
        Sample("out-long", lambda: (sparse(long),),
               call=lambda x: torch.nonzero(x, out=torch.empty(0, dtype=torch.int64, device=x.device)),
               expects="nonzero.out"),
        Sample("argwhere", lambda: (sparse(6, 7),), call=torch.argwhere),
        Sample("as-tuple", lambda: (sparse(6, 7),), call=lambda x: torch.nonzero(x, as_tuple=True)),
    ]
    if dtype == torch.float32:
        cases.append(Sample("error-out-dtype", lambda: (sparse(5, 5),),
                            call=lambda x: torch.nonzero(x, out=torch.empty(0, dtype=torch.int32, device=x.device)),
                            expects="nonzero.out"))
    return cases


def _perf_inputs(shape, dtype, device):
    from gems.spec import Sample
    from gems.testing.samples import make_tensor

    x = make_tensor(shape, dtype, device)
    half = torch.where(torch.rand(shape, device=device) < 0.5, x, torch.zeros((), dtype=dtype, device=device))
    return Sample("perf", (half,))


def _perf_bytes(sample, result):
    x = sample.args[0]
    return 2 * x.numel() * x.element_size() + result.numel() * result.element_size()


SPECS = [
    OpSpec(
        name="nonzero", family="compaction",
        impls={"nonzero": nonzero, "nonzero.out": nonzero_out},
        call=torch.nonzero,
        samples=_samples,
        dtypes=ALL,
        tolerance="exact",
        perf=PerfSpec(inputs=_perf_inputs, shapes="compaction", bytes=_perf_bytes),
    ),
]
