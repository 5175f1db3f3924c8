"""Nearest upsampling by whole power-of-two factors (interpreter vendor): the forward loads each input tile once
and stores it to its block of outputs (resample_blocks._blocks_forward_kernel), in both memory formats and for both
nearest modes; other factors take the general kernel. Values and strides are ATen's."""

import pytest
import torch

from gems.ops.pooling import upsampling
from gems.testing import proof

_OPS = {"nearest": ("upsample_nearest3d", torch.ops.aten.upsample_nearest3d.default),
        "nearest-exact": ("_upsample_nearest_exact3d", torch.ops.aten._upsample_nearest_exact3d.default)}


def _kernels(mode, x, size):
    name, aten = _OPS[mode]
    with proof.recording() as record:  # the implementation itself (the native layer could replay a call)
        y = upsampling.upsample(upsampling.Upsampling(name, 3, mode), x, size, ())
    expected = aten(x, size)
    assert torch.equal(y, expected)
    assert y.stride() == expected.stride()
    return dict(record.kernels)


@pytest.mark.parametrize("mode", sorted(_OPS))
@pytest.mark.parametrize("fmt", [torch.contiguous_format, torch.channels_last_3d])
@pytest.mark.parametrize("size", [[6, 10, 28], [3, 20, 7]])  # factors (2, 2, 4) and (1, 4, 1) of (3, 5, 7)
def test_whole_factors_store_each_input_tile_to_its_block(mode, fmt, size):
    x = torch.randn(2, 3, 3, 5, 7).contiguous(memory_format=fmt)
    assert _kernels(mode, x, size) == {"_blocks_forward_kernel": 1}


def test_a_strided_input_and_other_factors():
    x = torch.randn(2, 3, 3, 5, 14)[..., ::2]  # read through its strides
    assert _kernels("nearest", x, [6, 10, 14]) == {"_blocks_forward_kernel": 1}
    assert _kernels("nearest", x, [6, 15, 14]) == {"_resample_kernel": 1}  # H by 3: floor(o * scale)
