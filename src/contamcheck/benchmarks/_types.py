"""Benchmark questions as the rest of the pipeline sees them."""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from typing import NamedTuple


class Question(NamedTuple):
    """A question as read from its source: its id (the source's, else the row) and its row."""

    id: str
    text: str
    row: int


@dataclass(frozen=True)
class Item:
    """One benchmark question.

    ``id`` comes from the benchmark when it has ids, else it is the 0-based row number; ``position``
    is the question's place in the benchmark's published (canonical) order.
    """

    id: str
    text: str
    position: int


@dataclass(frozen=True)
class Benchmark:
    name: str
    spec: str
    field: str | None
    items: tuple[Item, ...]
    source: str
    ordered: bool = True  # whether ``position`` follows the published order
    set_aside: dict[str, int] = dataclasses.field(default_factory=dict)  # rows that hold no usable question
    title: str = ""  # how the dataset is called in prose, e.g. "GSM8K" (guided instructions name it)
    split: str = "test"
    kind: str = "mixed"  # "math", "code" or "mixed": what one question is

    @property
    def content_hash(self) -> str:
        digest = hashlib.sha256()
        for item in self.items:
            digest.update(item.id.encode("utf-8", "surrogatepass"))
            digest.update(b"\x00")
            digest.update(item.text.encode("utf-8", "surrogatepass"))
            digest.update(b"\x01")
        return "sha256:" + digest.hexdigest()
