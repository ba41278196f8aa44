"""Where computed evidence lives: in memory for one audit, or on disk (``cache``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol

from ..backends import TokenStats

Value = TokenStats | str


class EvidenceStore(Protocol):
    """Evidence by (namespace, request key); a namespace is one model with its settings."""

    def get_many(self, namespace: str, keys: Iterable[str]) -> dict[str, Value]: ...

    def put_many(self, namespace: str, entries: Mapping[str, Value]) -> None: ...


class MemoryStore:
    """A store that lives as long as the audit (``--no-cache``)."""

    def __init__(self) -> None:
        self._data: dict[tuple[str, str], Value] = {}

    def get_many(self, namespace: str, keys: Iterable[str]) -> dict[str, Value]:
        found = {}
        for key in keys:
            value = self._data.get((namespace, key))
            if value is not None:
                found[key] = value
        return found

    def put_many(self, namespace: str, entries: Mapping[str, Value]) -> None:
        for key, value in entries.items():
            self._data[(namespace, key)] = value
