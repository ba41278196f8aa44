"""A key/value cache layer written in place, for our greedy decoding loop.

transformers' ``DynamicLayer`` grows by ``torch.cat`` at every step: each new token copies the whole
cache of its layer into a fresh tensor one token longer. Over a completion of n tokens that is
O(n^2) copying, and a stream of ever-larger allocations that the C allocator cannot reuse, so the
resident memory of an audit climbs batch after batch. A generation batch knows its longest total
length in advance (padded prompt plus the largest token limit), so each layer here allocates its
buffer once, writes every new token into it, and hands attention a view of the filled part. Rows
that end are compacted in place to the front of the buffer; nothing is allocated after the prefill.
"""

from __future__ import annotations

from typing import Any

import torch
from transformers.cache_utils import DynamicLayer


class PreallocatedLayer(DynamicLayer):
    """A ``DynamicLayer`` whose keys and values live in one buffer of fixed capacity.

    ``keys`` and ``values`` are always views ``buffer[:rows, :, :length]``, so everything that reads
    them (the attention mask sizes, ``get_seq_length``) sees what ``DynamicLayer`` would show.
    """

    def __init__(self, keys: torch.Tensor, values: torch.Tensor, capacity: int) -> None:
        super().__init__()
        self.device = keys.device
        self.is_initialized = True
        self._fill(keys, values, capacity)

    def _fill(self, keys: torch.Tensor, values: torch.Tensor, capacity: int) -> None:
        rows, heads, length, _ = keys.shape
        self._key_buffer = keys.new_empty((rows, heads, max(capacity, length), keys.shape[-1]))
        self._value_buffer = values.new_empty((rows, heads, max(capacity, length), values.shape[-1]))
        self._key_buffer[:, :, :length] = keys
        self._value_buffer[:, :, :length] = values
        self._rows, self._length = rows, length
        self._expose()

    def update(
        self, key_states: torch.Tensor, value_states: torch.Tensor, *args: Any, **kwargs: Any
    ) -> tuple[torch.Tensor, torch.Tensor]:
        new = key_states.shape[-2]
        if self._length + new > self._key_buffer.shape[-2]:
            self._grow(self._length + new)
        stop = self._length + new
        self._key_buffer[: self._rows, :, self._length : stop] = key_states
        self._value_buffer[: self._rows, :, self._length : stop] = value_states
        self._length = stop
        return self._expose()

    def get_seq_length(self) -> int:
        return self._length

    def batch_select_indices(self, indices: torch.Tensor) -> None:
        """Keep the rows ``indices`` (ascending, as our loop passes them), moved to the front in place."""
        kept = [int(i) for i in indices.tolist()]
        if kept != sorted(kept) or len(set(kept)) != len(kept):
            raise ValueError("PreallocatedLayer keeps rows in ascending order, each once")
        for slot, row in enumerate(kept):
            if slot != row:  # slot < row, so a row is read before anything overwrites it
                self._key_buffer[slot, :, : self._length] = self._key_buffer[row, :, : self._length]
                self._value_buffer[slot, :, : self._length] = self._value_buffer[row, :, : self._length]
        self._rows = len(kept)
        self._expose()

    def crop(self, tokens_to_remove: int) -> None:
        if tokens_to_remove > 0:
            raise ValueError("crop takes a negative number of tokens to remove")
        self._length = max(0, self._length + tokens_to_remove)
        self._expose()

    def batch_repeat_interleave(self, repeats: int) -> None:
        keys, values = self._expose()
        capacity = self._key_buffer.shape[-2]
        self._fill(keys.repeat_interleave(repeats, dim=0), values.repeat_interleave(repeats, dim=0), capacity)

    def _grow(self, needed: int) -> None:
        """More tokens than the batch planned for: a larger buffer (never on our loop's path)."""
        capacity = max(needed, 2 * self._key_buffer.shape[-2])
        keys, values = self._expose()
        self._fill(keys.clone(), values.clone(), capacity)

    def _expose(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Point ``keys`` and ``values`` at the filled part of the buffers, and return them."""
        keys = self._key_buffer[: self._rows, :, : self._length]
        values = self._value_buffer[: self._rows, :, : self._length]
        self.keys, self.values = keys, values
        return keys, values


def preallocate(cache: Any, capacity: int) -> bool:
    """Swap each plain ``DynamicLayer`` of a filled cache for a :class:`PreallocatedLayer`.

    Layers of other kinds (sliding windows, linear attention) stay as they are. False when the
    cache has no such layers to swap, so the caller knows nothing changed.
    """
    layers = getattr(cache, "layers", None)
    if not isinstance(layers, list):
        return False
    swapped = False
    for index, layer in enumerate(layers):
        keys, values = getattr(layer, "keys", None), getattr(layer, "values", None)
        if type(layer) is DynamicLayer and keys is not None and values is not None and keys.dim() == 4:
            layers[index] = PreallocatedLayer(keys, values, capacity)
            swapped = True
    return swapped
