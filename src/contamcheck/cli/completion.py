"""Shell completion for the values click can't guess: models, benchmarks, references and tests.

Enabled as click enables it (README, "Shell completion"): ``eval "$(_CONTAMCHECK_COMPLETE=bash_source
contamcheck)"``. Names come from the registries, so a new built-in benchmark or test completes
without a change here; anything else completes as a path.
"""

from __future__ import annotations

import click
from click.shell_completion import CompletionItem


def _names(incomplete: str, names: list[str]) -> list[CompletionItem]:
    return [CompletionItem(name) for name in names if name.startswith(incomplete)]


def _packaged() -> list[str]:
    from ..backends.packaged import PACKAGED

    return [f"pkg:{name}" for name in PACKAGED]


def _path(incomplete: str) -> list[CompletionItem]:
    """The shell's own completion of a path (a file or a folder). It comes first: bash's script
    clears the names before it, and completes paths only where no name matches."""
    return [CompletionItem(incomplete, type="file")]


def models(incomplete: str) -> list[CompletionItem]:
    """A packaged model, a server's prefix, or a local folder or .gguf file."""
    return _path(incomplete) + _names(incomplete, [*_packaged(), "openai:http://"])


def model(_: click.Context, __: click.Parameter, incomplete: str) -> list[CompletionItem]:
    return models(incomplete)


def reference(_: click.Context, __: click.Parameter, incomplete: str) -> list[CompletionItem]:
    return _path(incomplete) + _names(incomplete, ["auto", "none", *_packaged()])


def benchmark(_: click.Context, __: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """A built-in benchmark, ``hf:``, or a question file."""
    from ..benchmarks.builtin import BUILTINS

    return _path(incomplete) + _names(incomplete, [*BUILTINS, "hf:"])


def tests(_: click.Context, __: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """The next name of a comma-separated list: ``min-k,z`` completes to ``min-k,zlib``."""
    from ..methods import TESTS

    done, comma, last = incomplete.rpartition(",")
    given = set(done.split(","))
    return [
        CompletionItem(done + comma + name)
        for name in TESTS.names()
        if name.startswith(last) and name not in given
    ]


def path(_: click.Context, __: click.Parameter, incomplete: str) -> list[CompletionItem]:
    return _path(incomplete)
