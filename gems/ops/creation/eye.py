"""eye (n; n, m; and their out= forms): ones on the diagonal, zeros elsewhere, written by one tiled kernel in a
single pass (ATen's CUDA kernel zeroes the matrix, then fills its diagonal: two launches). An out= of another
shape is resized to (n, m); one of the right shape is written through its strides."""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import SUPPORTED_DTYPES
from gems.dtypes import ALL
from gems.ops.copy.shared import INT32_LIMIT, tile_config, tile_offsets
from gems.ops.creation.fill import check_options, factory_samples
from gems.runtime.launch import Launcher, cdiv
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, lazy_perf


# n_cols is specialized (divisible by 16 or not): with it unknown, the column mask forbids vector stores, and a
# 4096x4096 eye was written one element per store (sm_90 SASS: 16 STG.U16 per thread, 0.22x ATen for fp16 on
# an H200; with the hint, 2 STG.128).
@triton.jit(do_not_specialize=["n_rows", "tiles_n"])
def _eye_kernel(out_ptr, n_rows, n_cols, stride_r, stride_c, tiles_n, INT64: tl.constexpr, BLOCK_M: tl.constexpr,
                BLOCK_N: tl.constexpr):
    """One [BLOCK_M, BLOCK_N] tile of out[r, c] = (r == c)."""
    pid = tl.program_id(0)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        pid = pid.to(tl.int64)
    offs_m, offs_n = tile_offsets(pid, tiles_n, BLOCK_M, BLOCK_N)
    values = (offs_m[:, None] == offs_n[None, :]).to(out_ptr.dtype.element_ty)
    mask = (offs_m < n_rows)[:, None] & (offs_n < n_cols)[None, :]
    tl.store(out_ptr + offs_m[:, None] * stride_r + offs_n[None, :] * stride_c, values, mask=mask)


_eye = Launcher(_eye_kernel)


def _check_sizes(n, m):
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")


def _eye_into(out):
    n, m = out.shape
    if out.numel() == 0:
        return out
    if out.dtype not in SUPPORTED_DTYPES:
        raise Fallback(f"dtype {out.dtype} not handled by gems eye")
    block_m, block_n, num_warps = tile_config(n, m, out.element_size(), False)
    tiles_n = cdiv(m, block_n)
    reach = (n - 1) * out.stride(0) + (m - 1) * out.stride(1)
    _eye((cdiv(n, block_m) * tiles_n,), out, n, m, out.stride(0), out.stride(1), tiles_n,
         max(reach, n * m) > INT32_LIMIT, block_m, block_n, num_warps=num_warps)
    return out


def eye_m(n, m, *, dtype=None, layout=None, device=None, pin_memory=None):
    dtype = torch.get_default_dtype() if dtype is None else dtype
    _check_sizes(n, m)
    check_options(dtype, layout, device, pin_memory)
    return _eye_into(torch.empty((n, m), dtype=dtype, device=device))


def eye(n, *, dtype=None, layout=None, device=None, pin_memory=None):
    return eye_m(n, n, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)


def eye_m_out(n, m, *, out):
    _check_sizes(n, m)
    if out.shape != (n, m):
        out.resize_((n, m))
    return _eye_into(out)


def eye_out(n, *, out):
    return eye_m_out(n, n, out=out)


def _eye_calls(dtype, device, quick):
    def made(*sizes):
        return lambda like: torch.eye(*sizes, dtype=like.dtype, device=like.device)

    calls = [("square", made(13), "eye"), ("wide", made(13, 17), "eye.m"), ("tall", made(17, 5), "eye.m"),
             ("empty", made(0, 4), "eye.m"), ("one", made(1), "eye"), ("negative-n-error", made(-1), None),
             ("negative-m-error", made(3, -2), None)]
    calls = [(variant, call, expects, ()) for variant, call, expects in calls]
    outs = (("out", (0,), "eye.out", lambda o: torch.eye(6, out=o)),
            ("out-m", (2, 2), "eye.m_out", lambda o: torch.eye(5, 9, out=o)),
            ("out-noncontiguous", (9, 5), "eye.m_out", lambda o: torch.eye(5, 9, out=o.t())))
    for variant, shape, expects, call in outs:
        calls.append((variant, lambda like, o, call=call: call(o), expects,
                      lambda shape=shape: (torch.empty(shape, dtype=dtype, device=device),)))
    if dtype == torch.float32:  # dtype=None: the default dtype
        calls.append(("default-dtype", lambda like: torch.eye(4, device=like.device), "eye", ()))
    return calls


SPECS = [
    OpSpec(
        name="eye", family="creation", impls={"eye": eye, "eye.m": eye_m, "eye.out": eye_out, "eye.m_out": eye_m_out},
        call=torch.eye, samples=factory_samples(_eye_calls), dtypes=ALL, tolerance="exact",
        perf=lazy_perf("gems.testing.samples_extra", "creation_perf",
                       lambda like, shape: torch.eye(shape[0], shape[-1], dtype=like.dtype, device=like.device),
                       shapes="eye"),
    ),
]
