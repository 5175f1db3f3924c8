"""Plans with a host read (gems/native/read_record.py, read_plans.h): operators whose result sizes depend on data
(nonzero, masked_select, x[mask], unique, unique_consecutive) replay natively after their first calls, reading each
call's own count, with ATen's answers; a count of 0 is a variant of its own.

The interpreter vendor runs the C++ keying, head, count lookup and formula evaluation as a GPU vendor does; its
launches and its read (a plain read on the host) call back into Python. On the nvidia vendor the same tests run the
CUDA primitive (its copy of the count to the host and stream sync), and a capture test checks the Python path's
error under a CUDA graph.
"""

import os
import shutil

import pytest
import torch

import gems
from gems import native

pytestmark = [
    pytest.mark.skipif(shutil.which(os.environ.get("CXX", "c++")) is None,
                       reason="no C++ compiler: the native layer cannot be built here"),
    pytest.mark.skipif(gems.vendor().device not in ("cpu", "cuda"),
                       reason="compares with ATen's kernels on the vendor's device (none on a simulated one)"),
    pytest.mark.usefixtures("gems_enabled"),
]

DEVICE = gems.vendor().device
N = 257  # more than one of a compaction block's 256-element steps; odd: masks run


def aten(fn, *args, **kwargs):
    with gems.aten_only():
        return fn(*args, **kwargs)


def python_calls(overload) -> int:
    return sum(native.python_calls().get(overload, {}).values())


def sparse(density, seed, shape=(N,), dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g).to(dtype)
    return torch.where(torch.rand(shape, generator=g) < density, x, torch.zeros((), dtype=dtype)).to(DEVICE)


DENSITIES = (0.5, 0.1, 0.0, 1.0, 0.9, 0.3, 0.0, 0.7)  # counts change every call, 0 and the full count included


def check_loop(overload, call, inputs, most_python=2):
    """Every call of ``call`` on ``inputs`` (one signature) equals ATen's; at most ``most_python`` took Python (a
    count of 0 and the rest: two read variants), the others replayed."""
    sizes = set()
    for args in inputs:
        got, want = call(*args), aten(call, *args)
        got, want = (got, want) if isinstance(got, tuple) else ((got,), (want,))
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape, (g.shape, w.shape)
            assert g.numel() == 0 or g.stride() == w.stride()  # an empty result's strides are the Python path's
            torch.testing.assert_close(g, w, rtol=0, atol=0, equal_nan=True)
        sizes.add(tuple(got[0].shape))
    assert len(sizes) > 2  # the counts did change
    if DEVICE == "cuda":  # a count of 1 and a multiple of 16 are Triton specialization classes: variants of their own
        most_python += 2
    assert python_calls(overload) <= most_python, native.python_calls().get(overload)
    assert native.call_counts().get(overload, 0) == len(inputs) - python_calls(overload)


def test_nonzero_replays_each_calls_count():
    check_loop("nonzero", torch.nonzero, [(sparse(d, s, (13, 21)),) for s, d in enumerate(DENSITIES)])


def test_nonzero_1d_and_argwhere():
    check_loop("nonzero", torch.argwhere, [(sparse(d, s),) for s, d in enumerate(DENSITIES)])


def test_masked_select_replays():
    x = torch.randn(N, device=DEVICE)
    check_loop("masked_select", torch.masked_select, [(x, sparse(d, s) != 0) for s, d in enumerate(DENSITIES)])


def test_boolean_index_replays():
    x = torch.randn(N, 3, device=DEVICE)
    check_loop("index.Tensor", lambda x, m: x[m], [(x, sparse(d, s) != 0) for s, d in enumerate(DENSITIES)])


@pytest.mark.parametrize("kwargs", [{}, {"return_inverse": True}, {"return_counts": True},
                                    {"sorted": True, "return_inverse": True, "return_counts": True}])
def test_unique_replays(kwargs):
    def pick(distinct, seed):
        g = torch.Generator().manual_seed(seed)
        return torch.randint(0, distinct, (N,), generator=g).float().to(DEVICE)

    # at least one value (the compaction of a non-empty input); a full count: every value distinct
    inputs = [(pick(d, s),) for s, d in enumerate((7, 40, 1, 3, 100, 2))] + [(torch.randperm(N).float().to(DEVICE),)]
    check_loop("_unique2", lambda x: torch.unique(x, **kwargs), inputs, most_python=1)


def test_unique_consecutive_replays():
    def runs(k, seed):
        g = torch.Generator().manual_seed(seed)
        return torch.randint(0, k, (N,), generator=g).sort().values.to(DEVICE)

    inputs = [(runs(k, s),) for s, k in enumerate((5, 50, 1, 9, 200))] + [(torch.arange(N, device=DEVICE),)]
    check_loop("unique_consecutive", lambda x: torch.unique_consecutive(x, return_inverse=True, return_counts=True),
               inputs, most_python=1)


def test_same_shapes_different_data_never_replay_a_stale_count():
    a, b = sparse(0.2, 1), sparse(0.8, 2)
    for _ in range(2):
        ra, rb = torch.nonzero(a), torch.nonzero(b)
        assert ra.shape[0] == int((a != 0).sum()) and rb.shape[0] == int((b != 0).sum())
        assert torch.equal(ra, aten(torch.nonzero, a)) and torch.equal(rb, aten(torch.nonzero, b))
    assert native.call_counts()["nonzero"] == 3 if DEVICE == "cpu" else native.call_counts()["nonzero"] >= 2


def test_no_grad_and_requires_grad_inputs():
    x = torch.randn(N, device=DEVICE, requires_grad=True)
    masks = [sparse(d, s) != 0 for s, d in enumerate((0.5, 0.2, 0.9))]
    with torch.no_grad():
        for m in masks:
            assert torch.equal(torch.masked_select(x, m), aten(torch.masked_select, x, m))
    for m in masks:
        got = torch.masked_select(x, m)
        assert got.requires_grad and got.grad_fn is not None
        assert torch.equal(got, aten(torch.masked_select, x.detach(), m))
    assert native.call_counts()["masked_select"] >= 4


def test_reads_take_no_size_generic_plan_and_other_shapes_record_anew():
    for n in (100, 101, 300):
        x = sparse(0.5, n, (n,))
        assert torch.equal(torch.nonzero(x), aten(torch.nonzero, x))
    assert not native.generic_counts().get("nonzero")
    assert python_calls("nonzero") == 3


@pytest.mark.skipif(DEVICE != "cuda", reason="CUDA graph capture")
def test_a_read_under_capture_takes_the_python_path():  # unreached on the interpreter: CUDA
    x = sparse(0.5, 0)
    for _ in range(2):
        torch.nonzero(x)
    assert native.call_counts()["nonzero"] == 1
    graph = torch.cuda.CUDAGraph()
    with pytest.raises(RuntimeError):  # .item() during capture, as ATen's nonzero raises
        with torch.cuda.graph(graph):
            torch.nonzero(x)
    assert "CUDA graph is captured" in native.python_reasons()["nonzero"]
