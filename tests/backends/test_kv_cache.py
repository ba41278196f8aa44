"""The in-place key/value cache layer against transformers' own DynamicLayer."""

from __future__ import annotations

import pytest
import torch
from transformers.cache_utils import DynamicCache, DynamicLayer

from contamcheck.backends.kv_cache import PreallocatedLayer, preallocate


def states(rows: int, length: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    shape = (rows, 2, length, 4)
    return torch.randn(shape, generator=generator), torch.randn(shape, generator=generator)


def test_updates_and_row_selection_match_a_dynamic_layer():
    dynamic = DynamicLayer()
    dynamic.update(*states(5, 3, 0))
    ours = PreallocatedLayer(dynamic.keys, dynamic.values, capacity=8)
    buffer = ours._key_buffer.data_ptr()
    for step, keep in enumerate([None, [0, 2, 3, 4], None, [1, 3], None]):
        if keep is not None:
            dynamic.batch_select_indices(torch.tensor(keep))
            ours.batch_select_indices(torch.tensor(keep))
        new = states(dynamic.keys.shape[0], 1, step + 1)
        expected, got = dynamic.update(*new), ours.update(*new)
        assert torch.equal(expected[0], got[0]) and torch.equal(expected[1], got[1])
        assert ours.get_seq_length() == dynamic.get_seq_length()
    assert ours._key_buffer.data_ptr() == buffer  # written in place: no new buffer
    assert ours.get_seq_length() == 8


def test_more_tokens_than_planned_grow_the_buffer():
    ours = PreallocatedLayer(*states(2, 3, 0), capacity=3)
    keys, _ = ours.update(*states(2, 2, 1))
    assert keys.shape == (2, 2, 5, 4) and ours._key_buffer.shape[-2] >= 5
    assert torch.equal(keys[:, :, :3], states(2, 3, 0)[0])


def test_rows_must_be_kept_in_order():
    ours = PreallocatedLayer(*states(3, 2, 0), capacity=4)
    with pytest.raises(ValueError, match="ascending"):
        ours.batch_select_indices(torch.tensor([2, 0]))


def test_preallocate_swaps_only_plain_dynamic_layers():
    cache = DynamicCache()
    for layer in range(2):
        cache.update(*states(2, 3, layer), layer_idx=layer)
    assert preallocate(cache, capacity=10)
    assert all(type(layer) is PreallocatedLayer for layer in cache.layers)
    assert cache.get_seq_length() == 3
    assert not preallocate(object(), capacity=10)


def test_crop_and_repeat_match_a_dynamic_layer():
    dynamic = DynamicLayer()
    dynamic.update(*states(2, 5, 0))
    ours = PreallocatedLayer(dynamic.keys, dynamic.values, capacity=12)
    for layer in (dynamic, ours):
        layer.crop(-2)
        layer.batch_repeat_interleave(2)
    assert torch.equal(ours.keys, dynamic.keys) and torch.equal(ours.values, dynamic.values)
    new = states(4, 1, 3)
    assert torch.equal(ours.update(*new)[0], dynamic.update(*new)[0])
