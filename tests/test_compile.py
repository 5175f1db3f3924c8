"""torch.compile with gems enabled (docs/native.md, "torch.compile"), on the interpreter vendor.

Dynamo traces with fake tensors, which never reach a backend-level kernel; gems' autograd-level operators
(rms_norm, isclose, isfinite) hand fake or functional tensors to ATen's composite, so the graph holds what
it decomposes into, and gems.fused functions trace their eager composite. What the compiled graph then runs:
with a backend that keeps ATen calls (aot_eager) every such call reaches gems' kernels; Inductor generates its
own kernels and calls gems only where its graph keeps an ATen call (an extern mm).
"""

import pytest
import torch

import gems

torch_dynamo = pytest.importorskip("torch._dynamo")
pytestmark = [
    pytest.mark.skipif(gems.vendor().name != "interpreter", reason="checks the interpreter vendor (CPU tensors)"),
    pytest.mark.usefixtures("gems_enabled"),
]


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch_dynamo.reset()
    yield
    torch_dynamo.reset()


def block(x, w, m):
    h = torch.nn.functional.rms_norm(torch.relu(x) + 1, (x.shape[-1],), w)
    return torch.softmax(gems.fused.silu_and_mul(h) @ m, dim=-1)


def inputs():
    gen = torch.Generator().manual_seed(0)
    return torch.randn(4, 32, generator=gen), torch.randn(32, generator=gen), torch.randn(16, 8, generator=gen)


def test_aot_eager_runs_the_graphs_aten_calls_on_gems_kernels():
    x, w, m = inputs()
    with gems.aten_only():
        want = block(x, w, m)
    gems.reset_counts()
    got = torch.compile(block, backend="aot_eager", fullgraph=True)(x, w, m)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    served = gems.call_counts()["gems"]
    # rms_norm as its composite (pow, mean, add, rsqrt, mul), silu_and_mul as silu and mul: all gems kernels.
    for overload in ("relu", "pow.Tensor_Scalar", "mean.dim", "rsqrt", "silu", "mm", "_softmax"):
        assert served.get(overload, 0) >= 1, (overload, served)
    assert "rms_norm" not in served and "gems.fused.silu_and_mul" not in served
    assert gems.call_counts()["fallback"] == {}


def test_inductor_calls_gems_where_its_graph_keeps_an_aten_call():
    a, b = torch.randn(8, 32), torch.randn(32, 16)
    with gems.aten_only():
        want = a @ b
    gems.reset_counts()
    got = torch.compile(lambda a, b: a @ b)(a, b)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    assert gems.call_counts()["gems"].get("mm.out", 0) == 1  # Inductor's extern matmul, served by gems


def test_eager_calls_of_the_same_operators_still_run_gems():
    x, w, m = inputs()
    torch.compile(block, backend="aot_eager")(x, w, m)
    gems.reset_counts()
    block(x, w, m)  # eager again: the autograd-level operators take gems' kernels, not the composite
    served = gems.call_counts()["gems"]
    assert served.get("rms_norm") == 1 and served.get("gems.fused.silu_and_mul") == 1
