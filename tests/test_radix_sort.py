"""The radix sort of long rows (gems/ops/sorting/radix.py) at interpreter sizes: RADIX_MIN and TILE are lowered
so that rows of a few thousand elements take it over several tiles, and its launches are counted to prove it
ran. Results are compared with ATen's stable sort bit for bit (values) and exactly (indices)."""

from __future__ import annotations

from collections import Counter

import pytest
import torch

import gems
from gems.ops.sorting import radix

N = 2500  # over the lowered RADIX_MIN; three tiles of the lowered TILE, the last one partial
RADIX_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.int32, torch.int16, torch.int8, torch.uint8,
                torch.bool)


@pytest.fixture
def launches(monkeypatch):
    """Counts of the radix kernels' launches, by kernel, with rows of N elements sent to the radix sort."""
    counts = Counter()
    monkeypatch.setattr(radix, "RADIX_MIN", 2048)
    monkeypatch.setattr(radix, "TILE", 1024)
    for name in ("_histogram", "_scan", "_scatter"):
        launcher = getattr(radix, name)

        def counting(grid, *args, _launcher=launcher, _name=name, **kwargs):
            counts[_name] += 1
            return _launcher(grid, *args, **kwargs)

        monkeypatch.setattr(radix, name, counting)
    return counts


def _bits(t):
    if t.dtype == torch.bool:
        return t.view(torch.uint8)
    return t.view({1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()])


def _row(dtype, shape):
    """Values with many ties; for floats NaN, +-Inf, -0.0 and 0.0 among them."""
    if dtype == torch.bool:
        return torch.randint(0, 2, shape).bool()
    if not dtype.is_floating_point:
        info = torch.iinfo(dtype)
        pool = torch.tensor([info.min, info.max, 0, 1, -1 if info.min < 0 else 2, 7, info.max - 1], dtype=dtype)
        return pool[torch.randint(0, len(pool), shape)]
    pool = torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0, 0.0, 1.5, -2.25, 1e-3, 65504.0])
    return torch.where(torch.rand(shape) < 0.5, pool[torch.randint(0, len(pool), shape)], torch.randn(shape)).to(dtype)


def _check_sort(x, dim, descending):
    with gems.aten_only():
        want = torch.sort(x, dim=dim, descending=descending, stable=True)
    with gems.use_gems(include=["sort"]):
        got = torch.sort(x, dim=dim, descending=descending, stable=True)
    assert torch.equal(got.indices, want.indices)
    assert torch.equal(_bits(got.values), _bits(want.values))


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dtype", RADIX_DTYPES)
def test_radix_sort_matches_the_stable_sort(dtype, descending, launches):
    torch.manual_seed(0)
    _check_sort(_row(dtype, (2, N)), -1, descending)
    passes = -(-radix.KEY_BITS[dtype] // radix.DIGIT_BITS)
    assert launches == {"_histogram": passes, "_scan": passes, "_scatter": passes}


@pytest.mark.parametrize("layout", ["transposed", "strided", "middle-dim"])
def test_radix_sort_of_any_dim_and_strides(layout, launches):
    torch.manual_seed(1)
    if layout == "transposed":  # rows along dim 0 of a transposed view
        x, dim = _row(torch.float16, (3, N)).t(), 0
    elif layout == "strided":
        x, dim = _row(torch.float32, (2, 2 * N))[:, ::2], 1
    else:
        x, dim = _row(torch.bfloat16, (2, N, 2)), 1
    _check_sort(x, dim, True)
    assert launches["_scatter"] > 0


@pytest.mark.parametrize("largest", [True, False])
def test_radix_topk_writes_the_first_k(largest, launches):
    torch.manual_seed(2)
    x = _row(torch.float32, (2, N))
    with gems.aten_only():
        want = torch.sort(x, dim=1, descending=largest, stable=True)
    with gems.use_gems(include=["topk"]):
        got = torch.topk(x, 37, dim=1, largest=largest)
    assert torch.equal(got.indices, want.indices[:, :37])
    assert torch.equal(_bits(got.values), _bits(want.values[:, :37]))
    assert launches["_scatter"] == 8


@pytest.mark.parametrize("dtype", [torch.float16, torch.int32])
def test_radix_unique_with_inverse_and_counts(dtype, launches):
    torch.manual_seed(3)
    x = _row(dtype, (N,))
    if dtype.is_floating_point:  # which zero shows, and which NaN gets which inverse, is the sort's (unique2.py)
        x[(x == 0) | (x != x)] = 0.0
    with gems.aten_only():
        want = torch.unique(x, return_inverse=True, return_counts=True)
    with gems.use_gems(include=["_unique2"]):
        got = torch.unique(x, return_inverse=True, return_counts=True)
    assert torch.equal(_bits(got[0]), _bits(want[0]))
    assert torch.equal(got[1], want[1]) and torch.equal(got[2], want[2])
    assert launches["_scatter"] > 0


def test_64_bit_keys_keep_the_merge_path(launches):
    torch.manual_seed(4)
    _check_sort(_row(torch.int64, (2, N)), 1, False)
    assert not launches


def test_radix_sort_replayed_and_at_other_sizes(launches):
    """Later calls of one signature replay the recorded launches (gems/native), other sizes make a plan of their
    own or a size-generic one: every result right, with two or three tiles, the last one partial or full."""
    torch.manual_seed(5)
    for n in (N, N, 2600, 3072, 2048):
        _check_sort(_row(torch.float32, (2, n)), 1, False)
    assert launches["_scatter"] > 0
