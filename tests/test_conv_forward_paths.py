"""Which forward scheme convolution.py picks (gems/ops/conv/convolution.py) and that each agrees with ATen on
the interpreter vendor: tiles of one image (PER_IMAGE) for NCHW results of at least PER_IMAGE_MIN_PIXELS
pixels, x read in place (X_PIXELS, one-image tiles) for a 1x1 stride-1 convolution over NCHW x with an NCHW
result of at least POINTWISE_MIN_PIXELS pixels, the flattened batch otherwise. Conformance checks the
results; this checks that its image-sized samples reach the new paths."""

import pytest
import torch
import torch.nn.functional as F

import gems
from gems.ops.conv import convolution as conv


@pytest.fixture(autouse=True)
def _interpreter():
    if gems.vendor().name != "interpreter":
        pytest.skip("checks the interpreter vendor (CPU tensors, single-config tuning)")


def _flags(monkeypatch):
    """Record (PER_IMAGE, X_PIXELS, x's channel stride) of each forward launch."""
    seen = []
    launch = conv.launch_tuned

    def recording(kernel, grid, *args):
        names = kernel.fn.fn.arg_names  # autotuner -> heuristics -> jit function
        named = dict(zip(names, args))
        seen.append((named["PER_IMAGE"], named["X_PIXELS"], named["sx_c"]))
        return launch(kernel, grid, *args)
    monkeypatch.setattr(conv, "launch_tuned", recording)
    return seen


@pytest.mark.parametrize("case", [
    # (x shape, w shape, stride, padding, channels_last, expected (PER_IMAGE, X_PIXELS))
    ((2, 20, 23, 23), (8, 20, 1, 1), 1, 0, False, (True, True)),  # 529 pixels: pointwise, in place
    ((1, 16, 22, 23), (8, 16, 1, 1), 1, 0, False, (False, False)),  # 506 pixels: under POINTWISE_MIN_PIXELS
    ((1, 16, 33, 32), (8, 16, 3, 3), 1, 1, False, (True, False)),
    ((1, 16, 23, 23), (8, 16, 3, 3), 1, 1, False, (False, False)),  # 529 pixels: under PER_IMAGE_MIN_PIXELS
    ((1, 16, 45, 45), (8, 16, 1, 1), 2, 0, False, (False, False)),  # 529 pixels, strided: not in place
    ((1, 16, 24, 24), (8, 16, 1, 1), 1, 0, True, (False, False)),  # channels-last result: channel-contiguous
    ((1, 3, 32, 33), (4, 3, 3, 3), 1, 1, False, (True, False)),  # few channels: the flattened reduction
])
def test_forward_scheme(monkeypatch, case):
    xs, ws, stride, padding, last, expected = case
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(xs, generator=gen)
    if last:
        x = x.to(memory_format=torch.channels_last)
    w, b = torch.randn(ws, generator=gen), torch.randn(ws[0], generator=gen)
    seen = _flags(monkeypatch)
    got = conv.convolution(x, w, b, [stride] * 2, [padding] * 2, [1, 1], False, [0, 0], 1)
    assert [s[:2] for s in seen] == [expected]
    if expected[1]:  # read in place: x's own (NCHW) channel stride, no NHWC copy
        assert seen[0][2] == xs[2] * xs[3]
    torch.testing.assert_close(got, F.conv2d(x, w, b, stride, padding), rtol=1e-4, atol=1e-4)
    assert got.is_contiguous(memory_format=torch.channels_last if last else torch.contiguous_format)


@pytest.mark.parametrize("shape", [(2, 70, 5, 13), (3, 5, 1, 2), (1, 64, 9, 8)])
@pytest.mark.parametrize("view", ["dense", "strided"])
def test_nhwc_copy_kernel(shape, view):
    """The gems NCHW -> NHWC copy (channels_innermost) gives ATen's permuted copy, odd channel and pixel
    counts included (masked tiles), for dense pixels and for a view whose pixels are not contiguous (every
    pixel placed through its strides), and the convolution over it agrees with ATen."""
    from gems.ops.conv import implicit_gemm

    gen = torch.Generator().manual_seed(1)
    x = torch.randn(shape, generator=gen)
    if view == "strided":  # every other row of a wider, channels-sliced parent
        n, c, h, w = shape
        x = torch.randn(n, c + 3, 2 * h, w + 2, generator=gen)[:, 1:c + 1, ::2, 1:w + 1]
        assert not x[0, 0].is_contiguous() or h == 1
    got = implicit_gemm.channels_innermost(implicit_gemm.as_3d(x, 2))[:, :, 0]
    assert got.is_contiguous(memory_format=torch.channels_last) and not got.is_contiguous()
    assert torch.equal(got, x)
    w, b = torch.randn(4, shape[1], 3, 3, generator=gen), torch.randn(4, generator=gen)
    out = conv.convolution(x, w, b, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)
    torch.testing.assert_close(out, F.conv2d(x, w, b, 1, 1), rtol=1e-4, atol=1e-4)


def test_nhwc_copy_3d_and_empty():
    """A 3-d (N, C, D, H, W) operand's pixels span depth too; an empty operand is returned as it is
    (contiguous in any order)."""
    from gems.ops.conv import implicit_gemm

    x = torch.randn(2, 17, 3, 4, 5, generator=torch.Generator().manual_seed(2))
    got = implicit_gemm.channels_innermost(x)
    assert got.is_contiguous(memory_format=torch.channels_last_3d) and torch.equal(got, x)
    strided = x[:, :, ::2]
    assert torch.equal(implicit_gemm.channels_innermost(strided), strided)
    empty = torch.empty(0, 3, 1, 2, 2)
    assert implicit_gemm.channels_innermost(empty) is empty
