"""Depthwise convolutions (one input channel per group) take the direct kernels of gems/ops/conv/depthwise.py,
never the implicit GEMM, forward and backward; the split grad_weight (several programs per tap, summed in
a fixed order) agrees with ATen; the tile follows the operand's layout. Conformance checks the results of
its samples; this checks the routing and the paths the interpreter's one-SM plan does not take."""

import pytest
import torch

import gems
from gems.ops.conv import convolution as conv
from gems.ops.conv import convolution_backward as conv_bwd
from gems.ops.conv import depthwise
from gems.ops.conv.implicit_gemm import as_3d, geometry


@pytest.fixture(autouse=True)
def _interpreter():
    if gems.vendor().name != "interpreter":
        pytest.skip("checks the interpreter vendor (CPU tensors)")


def _no_gemm(monkeypatch):
    def refuse(kernel, *args, **kwargs):
        raise AssertionError(f"implicit GEMM launched for a depthwise convolution: {kernel}")
    monkeypatch.setattr(conv, "launch_tuned", refuse)
    monkeypatch.setattr(conv_bwd, "launch_tuned", refuse)


@pytest.mark.parametrize("case", [
    # (x shape, w shape, stride, padding, dilation, groups, channels_last)
    ((2, 4, 7, 6), (4, 1, 3, 3), 1, 1, 1, 4, False),
    ((2, 4, 7, 6), (8, 1, 3, 3), 2, 0, 1, 4, True),  # multiplier 2, channels-last
    ((1, 3, 9, 9), (3, 1, 3, 2), 1, 2, 2, 3, False),
    ((2, 1, 5, 5), (2, 1, 3, 3), 1, 1, 1, 1, False),  # one input channel: depthwise with groups 1
])
def test_depthwise_routes_to_direct_kernels(monkeypatch, case):
    xs, ws, stride, padding, dilation, groups, last = case
    gen = torch.Generator().manual_seed(0)
    x, w, b = torch.randn(xs, generator=gen), torch.randn(ws, generator=gen), torch.randn(ws[0], generator=gen)
    if last:
        x = x.to(memory_format=torch.channels_last)
    geo = ([stride] * 2, [padding] * 2, [dilation] * 2, False, [0, 0], groups)
    _no_gemm(monkeypatch)
    got = conv.convolution(x, w, b, *geo)
    want = torch.ops.aten.convolution(x, w, b, *geo)
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    assert got.is_contiguous(memory_format=torch.channels_last if last else torch.contiguous_format)
    dy = torch.randn(want.shape, generator=gen)
    grads = conv_bwd.convolution_backward(dy, x, w, [ws[0]], *geo, [True, True, True])
    wants = torch.ops.aten.convolution_backward(dy, x, w, [ws[0]], *geo, [True, True, True])
    for g, r in zip(grads, wants):
        torch.testing.assert_close(g, r, rtol=1e-4, atol=1e-4)


def test_split_grad_weight_matches_aten_and_is_deterministic():
    gen = torch.Generator().manual_seed(1)
    x, w = torch.randn(1, 2, 64, 66, generator=gen), torch.randn(4, 1, 3, 3, generator=gen)
    args = ([2, 2], [1, 1], [1, 1], False, [0, 0], 2)
    dy = torch.randn(torch.ops.aten.convolution(x, w, None, *args).shape, generator=gen)
    geo = geometry(x, w, None, *args)
    results = []
    for _ in range(2):
        dw = torch.empty_like(w)
        depthwise.depthwise_grad_weight(geo, as_3d(dy, 2), dw, sm_count=100)  # 2 splits of 1056 pixels
        results.append(dw)
    want = torch.ops.aten.convolution_backward(dy, x, w, None, *args, [False, True, False])[1]
    torch.testing.assert_close(results[0], want, rtol=1e-4, atol=1e-4)
    assert torch.equal(results[0], results[1])


def test_tile_follows_layout():
    nchw = torch.empty(2, 96, 28, 28)
    assert depthwise._blocks(as_3d(nchw, 2), 784, 96) == (depthwise.NCHW_BLOCK_P,
                                                          depthwise.TILE // depthwise.NCHW_BLOCK_P, False)
    last = as_3d(nchw.to(memory_format=torch.channels_last), 2)
    assert depthwise._blocks(last, 784, 96) == (depthwise.TILE // depthwise.CHANNELS_LAST_BLOCK_C,
                                                depthwise.CHANNELS_LAST_BLOCK_C, True)
    assert depthwise._blocks(as_3d(torch.empty(2, 8, 7, 7), 2), 49, 8) == (64, 8, False)  # small: bounded by the sizes
