"""One registry pattern for tests, backends and benchmarks.

Entries may be registered eagerly (an object) or lazily as a ``"module:attribute"`` string, so that
listing what exists never imports torch. Unknown names raise :class:`UnknownNameError` with a
"did you mean" suggestion.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from .errors import UnknownNameError

T = TypeVar("T")


class Registry(Generic[T]):
    def __init__(self, kind: str, hint: str = "") -> None:
        self.kind = kind
        self.hint = hint
        self._entries: dict[str, T | str] = {}

    def register(self, name: str, entry: T | str) -> None:
        if name in self._entries:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        self._entries[name] = entry

    def decorator(self, name: str) -> Callable[[T], T]:
        def wrap(entry: T) -> T:
            self.register(name, entry)
            return entry

        return wrap

    def get(self, name: str) -> T:
        try:
            entry = self._entries[name]
        except KeyError:
            raise UnknownNameError(self.kind, name, self._entries, self.hint) from None
        if isinstance(entry, str):
            module_name, _, attribute = entry.partition(":")
            loaded: T = getattr(importlib.import_module(module_name), attribute)
            self._entries[name] = loaded
            return loaded
        return entry

    def names(self) -> list[str]:
        return list(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)
