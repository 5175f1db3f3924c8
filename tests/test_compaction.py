"""The compaction family's own checks beyond conformance: OpSpec.composite_of (quantile), and results
that span many blocks of the compaction (the conformance samples stay small on the interpreter)."""

from __future__ import annotations

import pytest
import torch

import gems
from gems import ops
from gems.perf import runner
from gems.spec import OpSpec


def _spec(**fields):
    base = dict(name="demo", family="sort", call=torch.quantile, samples=lambda *a: [], dtypes=(torch.float32,))
    return OpSpec(**{**base, **fields})


def test_composite_of_stands_in_for_impls():
    spec = _spec(impls={}, composite_of=("sort",))
    assert spec.overloads == ("sort",)
    with pytest.raises(ValueError, match="impls is empty"):
        _spec(impls={})
    with pytest.raises(ValueError, match="composite_of is for operators"):
        _spec(impls={"nonzero": lambda x: x}, composite_of=("sort",))


def test_quantile_is_declared_as_a_composite_of_sort():
    for name in ("quantile", "quantile.scalar", "quantile.out", "quantile.scalar_out"):
        assert torch._C._dispatch_has_kernel_for_dispatch_key(f"aten::{name}", "CompositeImplicitAutograd")
    spec = ops.get("quantile")
    assert spec.impls == {} and spec.composite_of == ("sort",)
    assert ops.implementations()["sort"][1] == "sort"  # still owned by sort's declaration


def test_perf_registers_what_a_composite_decomposes_into():
    case = runner.PerfCase(ops.get("quantile"), torch.float32)
    with runner._registered([ops.get("quantile")], [case]):
        assert "sort" in gems.registered_ops()
        assert "nonzero" not in gems.registered_ops()


def test_many_blocks():
    """Counts that cross many blocks (the carries of the block scan), checked against ATen."""
    torch.manual_seed(0)
    x = torch.randint(0, 3, (7, 1500)).float()  # about 10 blocks of scan_scatter.BLOCK
    x[x == 1] = float("nan")
    with gems.aten_only():
        want_nz = torch.nonzero(x)
        want_u = torch.unique_consecutive(x.view(-1) > 0.5, return_inverse=True, return_counts=True)
    gems.reset_counts()
    with gems.use_gems(include=["nonzero", "unique_consecutive"]):
        got_nz = torch.nonzero(x)
        got_u = torch.unique_consecutive(x.view(-1) > 0.5, return_inverse=True, return_counts=True)
    assert gems.call_counts()["gems"] == {"nonzero": 1, "unique_consecutive": 1}
    assert torch.equal(got_nz, want_nz) and got_nz.stride() == want_nz.stride()
    assert all(torch.equal(g, w) for g, w in zip(got_u, want_u))


def test_nonzero_uploads_a_shape_once():
    # The kernel reads x's sizes from the device: uploaded per call, a copy from pageable memory waited for
    # the stream (x[mask] at 0.14x ATen on an H200); cached, a second call of the shape copies nothing.
    from gems.runtime import device_tables

    x = torch.tensor([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]])
    with gems.use_gems(include=["nonzero"]):
        first = torch.nonzero(x)
        cached = dict(device_tables._tables)
        second = torch.nonzero(x * 2)
    assert torch.equal(first, torch.tensor([[0, 1], [1, 0], [1, 2]])) and torch.equal(second, first)
    assert any(key[1] == (2, 3) for key in cached)
    assert dict(device_tables._tables).keys() == cached.keys()
