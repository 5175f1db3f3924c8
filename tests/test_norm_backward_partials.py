"""The row norms' backward writes per-program partial weight/bias gradient rows into uninitialized buffers
(interpreter vendor): every element must be written, in the one-pass path and in the looped path where a
program adds several row blocks into its partial row."""

import pytest
import torch

import gems
from gems.runtime import registration


@pytest.mark.parametrize("shape", [(40, 4100), (37, 96)])  # looped (past one tile, 3 row blocks), one pass
def test_layer_norm_weight_and_bias_gradients_over_several_row_blocks(shape):
    torch.manual_seed(0)
    x = torch.randn(shape, dtype=torch.float32)
    weight, bias, dy = torch.randn(shape[1]), torch.randn(shape[1]), torch.randn(shape)
    leaves = [t.clone().requires_grad_() for t in (x, weight, bias)]
    previous = registration.snapshot()
    gems.enable()
    gems.reset_counts()
    try:
        out = torch.nn.functional.layer_norm(leaves[0], shape[1:], leaves[1], leaves[2])
        out.backward(dy)
        assert gems.call_counts()["gems"].get("native_layer_norm_backward", 0) == 1
    finally:
        registration.apply(previous, gems.vendor().dispatch_key)
    with registration.aten_only():
        ref = [t.double().requires_grad_() for t in (x, weight, bias)]
        torch.nn.functional.layer_norm(ref[0], shape[1:], ref[1], ref[2]).backward(dy.double())
    for got, want in zip(leaves, ref):
        torch.testing.assert_close(got.grad, want.grad.float(), rtol=1e-4, atol=1e-4)
