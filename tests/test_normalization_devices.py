"""Where CPU ATen and CUDA ATen differ in what the normalization family returns, gems follows the ATen of
the tensors' device. The interpreter's conformance compares with CPU ATen only, so the CUDA behaviour is
checked here against torch emulations of CUDA ATen's kernels (interpreter vendor)."""

import pytest
import torch

from gems.ops.reduction import softmax as softmax_module
from gems.runtime import registration


def _underflowing_softmax(shape, dim, dtype, seed):
    """fp16 softmax outputs of which many are 0 (underflowed), and gradients of both signs."""
    g = torch.Generator().manual_seed(seed)
    x = (torch.rand(shape, generator=g, dtype=torch.float64) * 40 - 20).to(dtype)
    dy = torch.randn(shape, generator=g, dtype=torch.float64).to(dtype)
    with registration.aten_only():
        y = torch.softmax(x, dim)
    return y, dy


def _cuda_aten_softmax_backward(dy, y, dim):
    """CUDA ATen's form: tmp = dy * y stored in dy's dtype, then tmp - y * sum(tmp) in fp32."""
    tmp = (dy.float() * y.float()).to(dy.dtype).float()
    return (tmp - y.float() * tmp.sum(dim, keepdim=True)).to(dy.dtype)


@pytest.mark.parametrize("shape, dim", [((3, 37), -1), ((3, 5003), -1), ((5003, 3), 0), ((2, 5003, 3), 1)])
def test_softmax_backward_zero_signs_follow_the_device_aten(shape, dim):
    y, dy = _underflowing_softmax(shape, dim, torch.float16, seed=sum(shape))
    zeros = y == 0
    assert zeros.sum() > 10 and (dy[zeros] < 0).any() and (dy[zeros] > 0).any()

    def signs_of_zeros(t):
        return torch.signbit(t[zeros & (t == 0)])

    cuda_form = softmax_module.backward(dy, y, dim, torch.float16, False, aten_device="cuda")
    want = _cuda_aten_softmax_backward(dy, y, dim)
    both = zeros & (cuda_form == 0) & (want == 0)
    assert both.sum() > 10
    assert torch.equal(torch.signbit(cuda_form[both]), torch.signbit(want[both]))
    assert signs_of_zeros(want).any() and not signs_of_zeros(want).all()  # the case has both signs to tell

    cpu_form = softmax_module.backward(dy, y, dim, torch.float16, False)
    with registration.aten_only():
        cpu_want = torch.ops.aten._softmax_backward_data(dy, y, dim, torch.float16)
    both = zeros & (cpu_form == 0) & (cpu_want == 0)
    assert torch.equal(torch.signbit(cpu_form[both]), torch.signbit(cpu_want[both]))
    assert not torch.equal(torch.signbit(cuda_form[zeros]), torch.signbit(cpu_form[zeros]))  # the forms differ


def test_batch_norm_refuses_on_cuda_the_empty_inputs_cuda_aten_cannot_reshape():
    from gems.ops.normalization.batch_norm import cuda_rejects_empty

    empty = torch.empty(0, 4, 5)
    assert cuda_rejects_empty(empty, "cuda") and not cuda_rejects_empty(empty, "cpu")
    assert not cuda_rejects_empty(torch.empty(2, 4, 0), "cuda")  # strides[1] == 1: the channels-last kernel
    assert not cuda_rejects_empty(torch.empty(0, 4), "cuda")
    assert not cuda_rejects_empty(torch.empty(0, 4, 2, 2).to(memory_format=torch.channels_last), "cuda")
    assert not cuda_rejects_empty(torch.empty(3, 4, 5), "cuda")


def test_an_output_whose_shape_differs_per_device_is_judged_against_the_device_aten():
    from gems.testing import compare

    tol = compare.default_tolerance(torch.float32, "reduction", 15)
    cpu_oracle = torch.empty(0, dtype=torch.float64)  # native_batch_norm's eval statistics on the CPU
    device_aten = torch.tensor([0.5, 2.0, -1.0, 3.0])  # and on CUDA
    assert compare.compare(device_aten.clone(), cpu_oracle, device_aten, tol).passed
    assert not compare.compare(torch.tensor([0.5, 2.0, -1.0, 3.5]), cpu_oracle, device_aten, tol).passed
    assert not compare.compare(device_aten.clone(), cpu_oracle, None, tol).passed  # no device ATen: the oracle's
    assert not compare.compare(torch.empty(0), torch.zeros(4, dtype=torch.float64), device_aten, tol).passed
