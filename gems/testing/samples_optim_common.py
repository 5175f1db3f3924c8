"""Shared pieces of the optimizer family's sample generators (gems/testing/samples_optim*.py): the list
shapes, the steps of optimizer states, an ATen overload by name, and lists of tensors (plain, views,
special values, mixed dtypes).

Every list holds tensors of odd, different sizes: a 2-D one, a 1-D one, a 0-d one, an empty one and one of
more than a tile (2048 elements: the unmasked full-tile path)."""

from __future__ import annotations

import torch

from gems.testing.samples import make_tensor, special_values

# (2048,): whole tiles of the kernels' 2048-element block and no tail; (2100,): a whole tile and a tail.
QUICK_SHAPES = ((13, 17), (2048,), (), (0, 3), (2100,))
MANY = tuple((i % 7 + 1, i % 5 + 2) for i in range(12))  # 12 tensors: a 4-step binary search for the row
FULL_SHAPES = ((257, 1023), (70001,), (), (0,), (31, 7, 3))
_MIXED = (torch.float32, torch.bfloat16, torch.float16, torch.float64)
STEPS = (1.0, 2.0, 5.0, 10.0, 100.0)


def aten(overload: str):
    name, _, variant = overload.partition(".")
    return getattr(getattr(torch.ops.aten, name), variant or "default")


def tensor_list(shapes, dtype, device, positive=False):
    return [make_tensor(shape, dtype, device, low=0.5 if positive else -4.0) for shape in shapes]


def view_list(dtype, device, positive=False):
    """A transposed, a strided, a permuted 3-d, a strided 5-d with size-1 dimensions (dropped before its others
    merge) and a contiguous tensor (the slow path's rows beside a fast one)."""
    low = 0.5 if positive else -4.0
    make = lambda *shape: make_tensor(shape, dtype, device, low=low)  # noqa: E731
    return [make(17, 13).t(), make(9, 22)[:, ::2], make(4, 5, 6).permute(2, 0, 1), make(3, 1, 4, 1, 6)[..., ::2],
            make(2200)]


def special_list(dtype, device, positive=False):
    values = special_values(dtype, device)
    return [values.abs() if positive else values, make_tensor((3, 5), dtype, device)]


def mixed_list(device, positive=False):
    """Rows of four dtypes: four launches, one per dtype group."""
    return [make_tensor((3, 5 + i), d, device, low=0.5 if positive else -4.0) for i, d in enumerate(_MIXED)]
