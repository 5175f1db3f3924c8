"""Shared pieces of the pooling family's sample generators (gems/testing/samples_pooling*.py): the dtype that
runs every variant and the quick-mode variant policy, the image shape, tensor makers (layouts, special values,
non-contiguous inputs, empty out= tensors)."""

from __future__ import annotations

import torch

from gems.testing.samples import make_tensor, special_values

FULL_DTYPE = torch.float32
IMAGE = (2, 3, 9, 11)  # (N, C, H, W) of the window and adaptive pooling samples
ATEN = torch.ops.aten
LAYOUT = {2: torch.channels_last, 3: torch.channels_last_3d}  # channels-last of 2 and 3 spatial dims
# The core variants every dtype runs in quick mode (each dtype's arithmetic, special values and gradient); the
# layouts and out= forms run on FULL_DTYPE there (they are index math, the same for every dtype).
_QUICK_EVERY_DTYPE = ("basic", "special-values", "upscale", "grad", "direct")
# A backward's: its direct call (the kernel under test; through autograd, the forward's kernel runs too).
QUICK_EVERY_DTYPE_BACKWARD = ("direct", "channels-last")


def maker(dtype, device):
    def make(shape, d=dtype, grad=False, layout=None):
        t = make_tensor(shape, d, device)
        if layout is not None:
            t = t.contiguous(memory_format=layout)
        return t.requires_grad_() if grad else t

    return make


def specials(shape, dtype, device, all_kinds=True):
    """Random values with NaN, +-Inf and -0.0 (or NaN only) sprinkled in (about one element in five)."""
    t = make_tensor(shape, dtype, device)
    values = special_values(dtype, device)[:5 if all_kinds else 1]
    picks = torch.randint(0, 5 * values.numel(), shape)
    hit = picks < values.numel()
    return torch.where(hit.to(device), values[picks.clamp(max=values.numel() - 1)].to(device), t)


def noncontiguous(make, shape):
    """shape with reversed strides (neither contiguous nor channels-last)."""
    return make(shape[::-1]).permute(*range(len(shape) - 1, -1, -1))


def empty(d, device):
    return torch.empty(0, dtype=d, device=device)


def with_extra(dtype, quick, core, extra, every=None):
    """FULL_DTYPE's samples: the core and the extra ones; the other dtypes': the core, in quick mode only its
    variants in ``every`` (default _QUICK_EVERY_DTYPE)."""
    if dtype == FULL_DTYPE:
        return core + extra()
    return [s for s in core if s.variant in (every or _QUICK_EVERY_DTYPE)] if quick else core

