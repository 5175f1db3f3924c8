"""dot: the inner product of two vectors (``dot``, ``dot.out``): the reductions' shared kernel summing a * b,
split over enough programs to fill the device (:func:`~gems.ops.blas.inner.inner`). ``matmul`` of
two vectors decomposes into ``dot``."""

from __future__ import annotations

import torch

from gems.dtypes import FLOATS
from gems.ops.blas.gemm import check_dtype, prepare_out, product_perf, samples
from gems.ops.blas.inner import inner
from gems.spec import OpSpec


def check_vectors(name: str, a: torch.Tensor, b: torch.Tensor) -> None:
    """ATen's checks of dot/vdot operands (RuntimeError)."""
    if a.dim() != 1 or b.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.dim()}D and {b.dim()}D tensors")
    if a.dtype != b.dtype:
        raise RuntimeError(f"{name} : expected both vectors to have same dtype, but found {a.dtype} and {b.dtype}")
    if a.numel() != b.numel():
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{a.numel()}] and src [{b.numel()}] to have "
                           f"the same number of elements, but got {a.numel()} and {b.numel()} elements respectively")
    if a.device != b.device:  # unreached on the interpreter: one device
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                           f"{a.device} and {b.device}!")
    check_dtype(name, a, b)


def inner_product(name: str, a: torch.Tensor, b: torch.Tensor, out=None) -> torch.Tensor:
    check_vectors(name, a, b)
    if out is None and a.numel():
        return inner(a, b)
    result = prepare_out(out, (), a)
    if a.numel() == 0:
        return result.zero_()  # a sum over nothing
    return inner(a, b, result)


def dot(self, tensor):
    return inner_product("dot", self, tensor)


def dot_out(self, tensor, *, out):
    return inner_product("dot", self, tensor, out)


SPECS = [
    OpSpec(
        name="dot", family="blas", impls={"dot": dot, "dot.out": dot_out}, call=torch.dot,
        samples=samples("dot_samples", torch.dot, "dot"), dtypes=FLOATS, tolerance="reduction",
        perf=product_perf("dot"),
        no_launch={"empty": "a sum over no element: zero (an allocation fill)"},
    ),
]
