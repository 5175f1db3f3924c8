"""The common ResNet convolutions (3x3 and 1x1 over NCHW, strided, depthwise; forward, and backward to the
input and weight grads) are replayed by the native layer once warm: every call only allocates, views and
launches gems kernels (the NCHW -> NHWC copies included), so no warm call pays the Python path's host time.

On the interpreter vendor (the same C++ keying, recording and replay as a GPU; on CUDA the key also holds the
TF32 setting that fp32 convolutions read, see gems.ops.blas.products.dot_precision). Values are checked against
ATen.
"""

import os
import shutil

import pytest
import torch

import gems
from gems import native

pytestmark = pytest.mark.skipif(shutil.which(os.environ.get("CXX", "c++")) is None,
                                reason="no C++ compiler: the native layer cannot be built here")

aten = torch.ops.aten


@pytest.fixture(autouse=True)
def _gems_native(request):
    if gems.vendor().name != "interpreter":
        pytest.skip("checks the interpreter vendor (CPU tensors, the Python launch primitive)")
    request.getfixturevalue("gems_enabled")


def _replays(overload, call, make, expected_none=()):
    """Call with fresh inputs three times (record, replay, replay: the interpreter's single configs are never
    tuned); every result must agree with ATen's."""
    for i in range(3):
        args = make(i)
        got = call(*args)
        with gems.aten_only():
            want = call(*args)
        got, want = (got, want) if isinstance(got, tuple) else ((got,), (want,))
        for j, (g, w) in enumerate(zip(got, want)):
            if j in expected_none:
                assert g is None and w is None
            else:
                torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-4)
    assert native.call_counts().get(overload, 0) == 2, gems.native_status()
    assert native.plan_counts().get(overload, 0) == 1


def _tensors(i, *shapes):
    gen = torch.Generator().manual_seed(i)
    return [torch.randn(s, generator=gen) for s in shapes]


@pytest.mark.parametrize("case", [
    # (x, w, stride, padding, groups)
    ((2, 16, 6, 5), (16, 16, 3, 3), 1, 1, 1),   # 3x3 NCHW: x and w copied to NHWC by gems' kernel
    ((1, 16, 7, 7), (24, 16, 1, 1), 2, 0, 1),   # 1x1 stride 2 (the downsampling shortcut)
    ((1, 16, 6, 6), (16, 1, 3, 3), 1, 1, 16),   # depthwise
], ids=["3x3", "1x1-s2", "depthwise"])
def test_forward_replays(case):
    xs, ws, stride, padding, groups = case
    _replays("convolution", lambda x, w: aten.convolution(x, w, None, [stride] * 2, [padding] * 2, [1, 1], False,
                                                          [0, 0], groups),
             lambda i: _tensors(i, xs, ws))


@pytest.mark.parametrize("case", [
    ((1, 16, 6, 6), (16, 16, 3, 3), 2, 1, 1, [True, True, False]),   # dx, dw; db not asked for (None)
    ((1, 16, 5, 5), (16, 1, 3, 3), 1, 1, 16, [True, True, True]),    # depthwise, with the bias grad
    ((1, 3, 9, 9), (16, 3, 3, 3), 2, 1, 1, [False, True, False]),    # the stem: only dw
], ids=["3x3-s2", "depthwise", "stem-dw"])
def test_backward_replays(case):
    xs, ws, stride, padding, groups, mask = case
    geo = ([stride] * 2, [padding] * 2, [1, 1], False, [0, 0], groups)

    def make(i):
        x, w = _tensors(i, xs, ws)
        with gems.aten_only():
            y = aten.convolution(x, w, None, *geo)
        return (_tensors(i + 10, tuple(y.shape))[0], x, w)

    _replays("convolution_backward",
             lambda dy, x, w: aten.convolution_backward(dy, x, w, [ws[0]] if mask[2] else None, *geo, mask),
             make, expected_none={j for j in range(3) if not mask[j]})


@pytest.mark.parametrize("groups", [1, 16], ids=["3x3", "depthwise"])
def test_split_weight_grad_replays(monkeypatch, groups):
    """On a GPU the weight grad is split over pixels into a temporary buffer and summed by a second kernel:
    the plan keeps the buffer as a temporary (the interpreter never splits unless told it has SMs)."""
    from gems.ops.conv import convolution_backward as cb
    from gems.ops.conv import depthwise

    monkeypatch.setattr(cb, "_sm_count", lambda device: 8)
    for module in (cb, depthwise):  # a split of small images: cheap under the interpreter
        monkeypatch.setattr(module, "MIN_PIXELS_PER_SPLIT", 64)
    geo = ([1, 1], [1, 1], [1, 1], False, [0, 0], groups)

    def make(i):
        x, w, dy = _tensors(i, (1, 16, 8, 24), (16, 16 // groups, 3, 3), (1, 16, 8, 24))
        return dy, x, w

    _replays("convolution_backward",
             lambda dy, x, w: aten.convolution_backward(dy, x, w, None, *geo, [False, True, False]),
             make, expected_none={0, 2})
    # Per replay (two): the split dw kernel, then the sum of its parts.
    assert native.launch_counts()["convolution_backward"] == 2 * 2
