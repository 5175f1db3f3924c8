"""isin: ``isin.Tensor_Tensor``, ``isin.Tensor_Scalar``, ``isin.Scalar_Tensor`` and their ``out=`` forms:
whether each element occurs among the test elements (``invert``: does not), compared in the promoted
dtype as ATen's brute-force path does (NaN is in nothing).

Each program takes BLOCK_N elements and sweeps all test elements BLOCK_T at a time, comparing a
[BLOCK_N, BLOCK_T] tile: O(n * m) work, which is what ATen does for the small test sets that usually
come; both tensors are read through contiguous flat views.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from gems.dtypes import NUMERIC
from gems.ops.reduction.planning import TL_DTYPES, reduce_max
from gems.runtime.launch import Launcher, cdiv, next_power_of_2
from gems.runtime.registration import Fallback
from gems.spec import OpSpec

# Elements per program and test elements per step: a 64 x 64 tile keeps 16 compares per thread at 8 warps
# on the GPU; the interpreter prefers fewer, larger programs (one numpy operation per step either way).
BLOCK_N, BLOCK_T = 64, 64


@triton.jit
def _isin_kernel(x_ptr, t_ptr, out_ptr, n, m, INVERT: tl.constexpr, CMP: tl.constexpr,
                 BLOCK_N: tl.constexpr, BLOCK_T: tl.constexpr):
    """out[i] = (x[i] in t) != INVERT, for the BLOCK_N elements of this program."""
    offs = tl.program_id(0).to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0).to(CMP)
    found = tl.full([BLOCK_N], 0, tl.int32)
    for j in range(0, m, BLOCK_T):
        offs_t = j + tl.arange(0, BLOCK_T)
        t = tl.load(t_ptr + offs_t, mask=offs_t < m, other=0).to(CMP)
        hit = (x[:, None] == t[None, :]) & (offs_t < m)[None, :]
        found = tl.maximum(found, reduce_max(hit.to(tl.int32), 1))
    if INVERT:
        found = 1 - found
    tl.store(out_ptr + offs, found != 0, mask=mask)


_launcher = Launcher(_isin_kernel)


def _isin(elements, test, invert, out):
    for t in (elements, test):
        if t.dtype == torch.bool:
            raise RuntimeError("Unsupported input type encountered for isin(): Bool")
    common = torch.result_type(elements, test)  # a 0-d side (a wrapped scalar) does not widen the other
    if common not in TL_DTYPES or elements.dtype not in TL_DTYPES or test.dtype not in TL_DTYPES:
        raise Fallback(f"isin of {elements.dtype} in {test.dtype} is not handled by gems")
    if out is None:
        out = torch.empty(elements.shape, dtype=torch.bool, device=elements.device)
    else:
        if out.dtype != torch.bool:
            raise Fallback(f"isin into {out.dtype}: left to ATen")
        if out.shape != elements.shape:
            out.resize_(elements.shape)
    n, m = elements.numel(), test.numel()
    if n == 0:
        return out
    target = out if out.is_contiguous() else torch.empty(elements.shape, dtype=torch.bool, device=out.device)
    cmp = torch.float32 if common in (torch.float16, torch.bfloat16) else common  # exact, and computable
    block = min(BLOCK_N, next_power_of_2(n))
    _launcher((cdiv(n, block),), elements.contiguous(), test.contiguous(), target, n, m, invert, TL_DTYPES[cmp],
              block, BLOCK_T, num_warps=4)
    return out if target is out else out.copy_(target)


def _scalar_tensor(value, like):
    """A number as ATen wraps it: a 0-d tensor of its own kind (the promotion sees a wrapped number)."""
    dtype = torch.result_type(like, value)
    return torch.tensor([value], dtype=dtype, device=like.device)


def isin_tensor_tensor(elements, test_elements, *, assume_unique=False, invert=False, out=None):
    return _isin(elements, test_elements, invert, out)


def isin_tensor_scalar(elements, test_element, *, assume_unique=False, invert=False, out=None):
    return _isin(elements, _scalar_tensor(test_element, elements), invert, out)


def isin_scalar_tensor(element, test_elements, *, assume_unique=False, invert=False, out=None):
    # The element as a 0-d tensor of its own kind (int64, double, bool), as ATen's scalar_to_tensor makes it.
    dtype = torch.float64 if isinstance(element, float) else None
    return _isin(torch.tensor(element, dtype=dtype, device=test_elements.device), test_elements, invert, out)


def _tensor_tensor_out(elements, test_elements, *, assume_unique=False, invert=False, out):
    return _isin(elements, test_elements, invert, out)


def _samples(dtype, device, quick):
    from gems.spec import Sample
    from gems.testing.samples import make_tensor, shape_for

    rows, cols = shape = shape_for(quick)
    make = lambda s, **kw: make_tensor(s, dtype, device, int_low=-20, int_high=20, **kw)
    # Float tests drawn from the elements themselves, so that some are found.
    pick = lambda x, k: x.reshape(-1)[: k].clone() if dtype.is_floating_point else make((k,))
    tt, ts, st = "isin.Tensor_Tensor", "isin.Tensor_Scalar", "isin.Scalar_Tensor"

    def with_nan():
        x = make(shape)
        x.view(-1)[::5] = float("nan")
        return x, torch.cat([x.reshape(-1)[:10], x.reshape(-1)[:1]])

    cases = [
        Sample("contiguous", lambda: (lambda x: (x, pick(x, 7)))(make(shape))),
        Sample("long-test", lambda: (lambda x: (x, torch.cat([pick(x, 50), make((150,))])))(make(shape))),
        Sample("invert", lambda: (lambda x: (x, pick(x, 7)))(make(shape)), {"invert": True}),
        Sample("noncontiguous-transposed", lambda: (lambda x: (x, pick(x, 9)))(make(shape[::-1]).t())),
        Sample("test-2d-noncontiguous", lambda: (lambda x: (x, x[:3, ::2]))(make(shape))),
        Sample("0d", lambda: (make(()), make((5,)))),
        Sample("empty", lambda: (make((0, cols)), make((5,)))),
        Sample("empty-test", lambda: (make(shape), make((0,)))),
        Sample("promotion-float-test", lambda: (make(shape), torch.tensor([0.5, 3.0, -2.0], device=device))),
        Sample("scalar-test", lambda: (lambda x: (x, x.reshape(-1)[0].item()))(make(shape)), expects=ts),
        Sample("scalar-test-invert", lambda: (lambda x: (x, x.reshape(-1)[0].item()))(make(shape)),
               {"invert": True}, expects=ts),
        Sample("scalar-element", lambda: (lambda t: (t.reshape(-1)[2].item(), t))(make((11,))), expects=st),
        Sample("scalar-element-missing", lambda: (1000, make((11,))), expects=st),
        Sample("out", lambda: (lambda x: (x, pick(x, 7)))(make(shape)), expects=f"{tt}_out",
               call=lambda x, t: torch.isin(x, t, out=torch.empty(0, dtype=torch.bool, device=x.device))),
    ]
    if dtype.is_floating_point:
        cases.append(Sample("special-values-nan", lambda: with_nan()))
    return cases


SPECS = [
    OpSpec(
        name="isin", family="reduction",
        impls={"isin.Tensor_Tensor": isin_tensor_tensor, "isin.Tensor_Scalar": isin_tensor_scalar,
               "isin.Scalar_Tensor": isin_scalar_tensor, "isin.Tensor_Tensor_out": _tensor_tensor_out},
        call=torch.isin,
        samples=_samples,
        dtypes=NUMERIC,
        tolerance="exact",
    ),
]
