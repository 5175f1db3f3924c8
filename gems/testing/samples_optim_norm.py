"""Samples of _foreach_norm.Scalar: orders of the norm over the family's lists."""

from __future__ import annotations

import math

import torch

from gems.spec import Sample
from gems.testing.samples import REJECT_HOST_DTYPE, make_tensor
from gems.testing.samples_optim_common import (
    FULL_SHAPES,
    MANY,
    QUICK_SHAPES,
    mixed_list,
    special_list,
    tensor_list,
    view_list,
)


def norm_samples():
    """The generator of _foreach_norm.Scalar's samples (declarations name a factory, gems.spec.lazy)."""
    return _norm_samples


def _norm_samples(dtype, device, quick):
    """_foreach_norm.Scalar: orders 2, 1 and inf over the family's lists, views, special values; in float32
    and bfloat16 orders 0, -inf, 3, 0.5 and -1.5 too; in float32 only a list crossing a chunk (two partials to
    combine), ``dtype=``, mixed dtypes, many tensors and the errors (an empty list, a ``dtype`` that
    narrows)."""
    shapes = QUICK_SHAPES if quick else FULL_SHAPES
    # inf, -inf and negative orders have no value on an empty tensor (linalg_vector_norm raises): no empty one
    nonempty = tuple(s for s in shapes if math.prod(s))
    reduction = max(math.prod(s) for s in shapes)
    lists = lambda shapes=shapes: (tensor_list(shapes, dtype, device),)  # noqa: E731
    views = lambda: (view_list(dtype, device),)  # noqa: E731
    special = lambda: (special_list(dtype, device),)  # noqa: E731
    orders = [("2", 2), ("1", 1), ("inf", math.inf)]
    if dtype in (REJECT_HOST_DTYPE, torch.bfloat16):  # the orders of linalg_vector_norm beyond ATen's fast path
        orders += [("0", 0), ("-inf", -math.inf), ("3", 3), ("0.5", 0.5), ("-1.5", -1.5)]
    cases = []
    for ord_name, order in orders:
        some = (lambda: lists(nonempty)) if order == math.inf or order < 0 else lists
        cases.append(Sample(f"ord-{ord_name}", some, {"ord": order}, reduction_size=reduction))
        if ord_name in ("2", "1", "inf"):
            cases += [Sample(f"ord-{ord_name}-noncontiguous", views, {"ord": order}, reduction_size=2200),
                      Sample(f"ord-{ord_name}-special", special, {"ord": order}, reduction_size=16)]
    if dtype == REJECT_HOST_DTYPE:
        mixed = lambda: (mixed_list(device),)  # noqa: E731
        cases += [
            Sample("multi-chunk", lambda: ([make_tensor((70001,), dtype, device), make_tensor((5,), dtype, device)],),
                   reduction_size=70001),
            Sample("dtype-float64", lists, {"dtype": torch.float64}, reduction_size=reduction),
            Sample("many", lambda: (tensor_list(MANY, dtype, device),), reduction_size=35),
            Sample("mixed-dtypes", mixed, reduction_size=24),
            Sample("empty-tensors", lambda: ([make_tensor((0,), dtype, device), make_tensor((0, 3), dtype, device)],)),
            Sample("ord-3-special", special, {"ord": 3}, reduction_size=16),
            Sample("ord-0-special", special, {"ord": 0}, reduction_size=16),
            Sample("error-empty-list", lambda: ([],)),
            Sample("error-dtype-narrows", lists, {"dtype": torch.bfloat16}),
            Sample("error-dtype-integer", lists, {"dtype": torch.int32}),
            Sample("error-dtype-complex", lists, {"dtype": torch.complex64}),
            Sample("error-inf-of-empty", lists, {"ord": -math.inf}),
        ]
    if dtype in (torch.float16, torch.bfloat16):
        cases.append(Sample("dtype-float32", lists, {"dtype": torch.float32}, reduction_size=reduction))
    return cases
