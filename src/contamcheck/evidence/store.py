"""Where computed evidence lives: in memory for one audit, or on disk (``cache.EvidenceCache``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ..backends.base import TokenStats

Value = TokenStats | str


@runtime_checkable
class EvidenceStore(Protocol):
    """Evidence by (namespace, request key); a namespace is one model with its settings.

    A store also remembers what the report says about each model (so a warm run loads none) and
    the digests of weight files (so a local model is hashed once).
    """

    def get_many(self, namespace: str, keys: Iterable[str]) -> dict[str, Value]: ...

    def put_many(self, namespace: str, entries: Mapping[str, Value]) -> None:
        """Store the entries not stored yet; one already there keeps its value (first write wins)."""

    def get_model_info(self, namespace: str) -> dict[str, Any] | None: ...

    def put_model_info(self, namespace: str, info: dict[str, Any]) -> None: ...

    def file_digest(self, path: Path) -> str: ...


class MemoryStore:
    """A store that lives as long as the audit (``--no-cache``)."""

    def __init__(self) -> None:
        self._data: dict[tuple[str, str], Value] = {}
        self._models: dict[str, dict[str, Any]] = {}
        self._digests: dict[tuple[str, int, int], str] = {}

    def get_many(self, namespace: str, keys: Iterable[str]) -> dict[str, Value]:
        found = {}
        for key in keys:
            value = self._data.get((namespace, key))
            if value is not None:
                found[key] = value
        return found

    def put_many(self, namespace: str, entries: Mapping[str, Value]) -> None:
        for key, value in entries.items():
            self._data.setdefault((namespace, key), value)  # first write wins, as in the cache

    def get_model_info(self, namespace: str) -> dict[str, Any] | None:
        return self._models.get(namespace)

    def put_model_info(self, namespace: str, info: dict[str, Any]) -> None:
        self._models[namespace] = dict(info)

    def file_digest(self, path: Path) -> str:
        from .cache import sha256_file

        stat = path.stat()
        key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
        if key not in self._digests:
            self._digests[key] = sha256_file(path)
        return self._digests[key]
