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


@pytest.mark.parametrize("unrolled", [True, False], ids=["unrolled", "one-reader-a-step"])
@pytest.mark.parametrize("mode", ["linear", "cubic"])
def test_backward_readers_in_unrolled_chunks_and_one_at_a_time(mode, unrolled, monkeypatch):
    """resample's backward visits an input's readers UNROLL at a time on small grids, one at a time on large
    ones: both agree with ATen's backward, also where more outputs read an input than one chunk holds (x5 and
    x1.5 along different axes, scales given that differ from the sizes' ratio, align_corners)."""
    from gems.ops.pooling import resample, upsample_bicubic2d, upsample_trilinear3d

    monkeypatch.setattr(resample, "UNROLL_MAX_NUMEL", 1 << 20 if unrolled else 0)
    if mode == "linear":
        up, aten = upsample_trilinear3d.UPSAMPLING, torch.ops.aten.upsample_trilinear3d_backward.default
        cases = [((2, 3, 3, 4, 5), (6, 20, 8), (False, None, None, None)),
                 ((1, 2, 4, 3, 6), (9, 15, 7), (True, None, None, None)),
                 ((1, 2, 3, 4, 5), (7, 9, 11), (False, 2.5, 2.0, 2.5))]
    else:
        up, aten = upsample_bicubic2d.UPSAMPLING, torch.ops.aten.upsample_bicubic2d_backward.default
        cases = [((2, 3, 4, 5), (20, 8), (False, None, None)), ((1, 2, 3, 6), (14, 9), (True, None, None)),
                 ((1, 2, 4, 5), (9, 11), (False, 2.5, 2.0))]
    torch.manual_seed(3)
    for input_size, output_size, rest in cases:
        grad = torch.randn(*input_size[:2], *output_size, dtype=torch.float64)
        with proof.recording() as record:
            got = upsampling.upsample_backward(up, grad, output_size, input_size, rest)
        assert dict(record.kernels) == {"_resample_backward_kernel": 1}
        torch.testing.assert_close(got, aten(grad, output_size, input_size, *rest), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("small_grid", [True, False], ids=["two-rows-a-step", "one-row-a-step"])
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_antialias_rows_two_or_one_a_step(mode, small_grid, monkeypatch):
    """The antialiased forward takes its rows of taps two at a time on small grids, one at a time on large ones:
    both agree with ATen, with odd and even numbers of rows (halving: 9 rows of bicubic taps, 5 of bilinear;
    a third: 13 and 7)."""
    from gems.ops.pooling import antialias

    monkeypatch.setattr(antialias, "SMALL_GRID", 1 << 20 if small_grid else 0)
    torch.manual_seed(5)
    x = torch.randn(1, 3, 24, 30, dtype=torch.float64)
    for size in ([12, 15], [8, 10], [9, 14]):
        with proof.recording() as record:
            got = antialias.antialias(x, torch.empty(1, 3, *size, dtype=x.dtype), mode == "bicubic", False,
                                      (None, None))
        assert dict(record.kernels) == {"_aa_kernel": 1}
        want = torch.nn.functional.interpolate(x, size=size, mode=mode, antialias=True, align_corners=False)
        torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)
