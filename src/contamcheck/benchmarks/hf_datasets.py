"""Questions from a Hugging Face dataset (``hf:dataset[:config]:split:field``)."""

from __future__ import annotations

from typing import Any

from .. import hub
from ..errors import InputError, ModelLoadError
from ._types import Question

SPEC_FORMAT = "hf:dataset[:config]:split:field, e.g. hf:openai/gsm8k:main:test:question"


class HubUnreachable(ModelLoadError):
    """The Hub could not be reached and the dataset is not in the local cache."""


def parse_spec(spec: str) -> tuple[str, str | None, str, str]:
    parts = spec.removeprefix("hf:").split(":")
    if len(parts) == 3:
        dataset, split, field = parts
        config = None
    elif len(parts) == 4:
        dataset, config, split, field = parts
    else:
        raise InputError(f"Can't read the benchmark spec {spec!r}. Use {SPEC_FORMAT}.")
    if not all([dataset, split, field]) or config == "":
        raise InputError(f"The benchmark spec {spec!r} has an empty part. Use {SPEC_FORMAT}.")
    return dataset, config, split, field


def load_rows(
    dataset: str, config: str | None, split: str, local_hint: str
) -> tuple[list[dict[str, Any]], list[str]]:
    """All rows of one split, and the column names. Raises :class:`HubUnreachable` when offline."""
    if not hub.offline_mode() and not hub.hub_reachable():
        raise HubUnreachable(hub.unreachable_message(f"the dataset {dataset!r}", local_hint))
    try:
        import datasets
    except ImportError:
        raise InputError(
            "Loading Hugging Face datasets needs the datasets package: pip install datasets"
        ) from None
    try:
        table = datasets.load_dataset(dataset, config, split=split)
    except ValueError as exc:  # unknown split or config
        raise InputError(f"Can't load {dataset!r} (config {config!r}, split {split!r}): {exc}") from None
    except FileNotFoundError as exc:
        raise InputError(f"No dataset {dataset!r} on the Hub or in the local cache: {exc}") from None
    except ConnectionError as exc:
        raise HubUnreachable(
            hub.unreachable_message(f"the dataset {dataset!r}", local_hint) + f" ({exc})"
        ) from None
    return list(table), list(table.column_names)


def read_questions(
    dataset: str, config: str | None, split: str, field: str, local_hint: str
) -> list[Question]:
    rows, columns = load_rows(dataset, config, split, local_hint)
    if field not in columns:
        raise InputError(f"Field {field!r} is not in {dataset!r} ({split}). Columns: {', '.join(columns)}.")
    id_key = next((k for k in ("task_id", "id", "question_id") if k in columns and k != field), None)
    questions = []
    for index, row in enumerate(rows):
        value = row[field]
        if value is None or (isinstance(value, str) and not value.strip()):
            continue
        if not isinstance(value, str):
            raise InputError(
                f"Field {field!r} of {dataset!r} holds {type(value).__name__}, not text. Pick a text field."
            )
        questions.append(Question(str(row[id_key]) if id_key else str(index), value, index))
    return questions
