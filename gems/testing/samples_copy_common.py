"""Shared pieces of the copies' sample generators (gems/testing/samples_copy_*.py): the channels-last
memory format and its 4-d shape, a tensor maker of the case's dtype and device, a dtype to convert to."""

from __future__ import annotations

import torch

from gems.testing.samples import make_tensor

CHANNELS_LAST = torch.channels_last
NCHW = (2, 3, 5, 7)


def maker(dtype, device):
    return lambda shape, d=dtype, **domain: make_tensor(shape, d, device, **domain)


def other_dtype(dtype):
    return torch.float64 if dtype != torch.float64 else torch.int32
