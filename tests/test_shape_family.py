"""The shape family's launch counts and layout merging (interpreter vendor): cat joins up to eight inputs in one
launch, whatever their number and layouts, and the copy kernel walks a contiguous copy as one dim."""

import pytest
import torch

import gems
from gems.ops.shape import cat, remap
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
