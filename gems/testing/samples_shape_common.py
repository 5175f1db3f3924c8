"""Helpers shared by the shape family's sample modules (samples_shape_*.py): FULL_DTYPE (the dtype that runs
every variant), tensor makers, empty out= tensors and special values."""

from __future__ import annotations

import torch

from gems.testing.samples import make_tensor, special_values

FULL_DTYPE = torch.float32


def maker(dtype, device):
    def make(shape, d=dtype, grad=False):
        t = make_tensor(shape, d, device)
        return t.requires_grad_() if grad else t

    return make


def fresh(like, dtype=None):
    """An empty out= tensor for a result like ``like`` (the op resizes it)."""
    return torch.empty(0, dtype=like.dtype if dtype is None else dtype, device=like.device)


def with_extra(dtype, core, extra):
    """core for every dtype, core + extra (a function making them) for FULL_DTYPE."""
    return core + extra() if dtype == FULL_DTYPE else core


def specials_2d(dtype, device):
    values = special_values(dtype, device)
    return values.reshape(2, -1)
