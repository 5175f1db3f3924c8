"""The shape family's launch counts and layout merging (interpreter vendor): cat joins up to eight inputs in one
launch, whatever their number and layouts, the copy kernel walks a contiguous copy as one dim, and repeat loads
each tile of x once for several copies."""

import pytest
import torch

import gems
from gems.ops.shape import cat, remap, repeat
from gems.testing import proof


def _launches(call):
    with gems.use_gems(include=["cat"]), proof.recording() as record:
        result = call()
    return result, record.launches


@pytest.mark.parametrize("count, launches", [(2, 1), (8, 1), (9, 2), (17, 3)])
def test_cat_launches_once_per_eight_inputs(count, launches):
    inputs = [torch.randn(3, k + 1) for k in range(count)]
    result, launched = _launches(lambda: torch.cat(inputs, 1))
    assert launched == launches == -(-count // cat.SLOTS)
    assert torch.equal(result, torch.cat([t.clone() for t in inputs], 1))


def test_cat_of_a_kv_cache_step_and_of_sliced_halves_is_one_launch():
    past, new = torch.randn(1, 2, 9, 16), torch.randn(1, 2, 1, 16)
    assert _launches(lambda: torch.cat([past, new], 2))[1] == 1
    x = torch.randn(4, 32)
    assert _launches(lambda: torch.cat([x[:, 16:], x[:, :16]], -1))[1] == 1  # rotate_half's layout


def test_cat_copies_an_input_it_cannot_walk_in_rows_and_columns_with_a_launch_of_its_own():
    transposed = torch.randn(5, 3).t()  # joined along dim 0: its elements are not rows of one stride
    result, launched = _launches(lambda: torch.cat([transposed, torch.randn(2, 5)], 0))
    assert launched == 2
    assert torch.equal(result[:3], transposed)


def test_copy_kernel_merges_contiguous_dims_and_keeps_flipped_ones_apart():
    x = torch.randn(2, 3, 4, 5)
    out = torch.empty_like(x)
    assert remap.rank(remap.dims_of(x, out)) == 1
    assert remap.rank(remap.dims_of(x, out, {1: (remap.FLIP, 0), 2: (remap.FLIP, 0)})) == 3  # 2 | 3*4 flipped | 5
    t = x.transpose(1, 2)
    assert remap.rank(remap.dims_of(t, torch.empty(t.shape))) == 4


def _repeat_kernels(x, repeats):
    with proof.recording() as record:  # the implementation itself (the native layer could replay a call)
        result = repeat.repeat(x, repeats)
    assert torch.equal(result, x.repeat(*repeats))
    return record.kernels


@pytest.mark.parametrize("groups", [1, 2])
def test_repeat_stores_each_loaded_tile_to_its_copies_in_groups_of_programs(monkeypatch, groups):
    # 3 x 2 x 4 x 2 = 48 copies of a non-contiguous x: COPIES_PER_PROGRAM a program, or more where the grid's
    # second dim would pass its limit (here made 2 groups)
    monkeypatch.setattr(repeat, "_MAX_GROUPS", groups if groups > 1 else repeat._MAX_GROUPS)
    x = torch.randn(2, 1, 9, 2).transpose(2, 3)
    assert _repeat_kernels(x, (3, 2, 4, 2)) == {"_repeat_kernel": 1}


def test_repeat_walks_out_where_more_dims_are_repeated_than_its_kernel_takes():
    assert _repeat_kernels(torch.randn(2, 2, 2, 2, 5), (2, 2, 2, 2, 2)) == {"_remap_kernel": 1}
