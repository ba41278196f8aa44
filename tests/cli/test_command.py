"""An audit's settings as the command that runs it (the web UI's job page shows it)."""

from __future__ import annotations

import shlex

import pytest

from contamcheck import AuditConfig, pipeline
from contamcheck.cli import main
from contamcheck.cli.app import cli
from contamcheck.cli.command import COMMANDS, command_line


def parsed(command: str, monkeypatch) -> AuditConfig:
    """The config the CLI builds from ``command``, caught where the audit would start."""
    seen: list[AuditConfig] = []

    def caught(config, progress=None, store=None):
        seen.append(config)
        raise RuntimeError("caught")  # the CLI says "Internal error": no audit runs

    monkeypatch.setattr(pipeline, "audit", caught)
    main(shlex.split(command)[1:])
    assert len(seen) == 1, command
    return seen[0]


def test_the_commands_named_are_the_clis():
    assert set(COMMANDS) == set(cli.commands)


def test_defaults_give_the_short_form():
    assert (
        command_line(AuditConfig(model="fake:clean", benchmark="sample")) == "contamcheck fake:clean sample"
    )


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"limit": 40, "seed": 3, "tests": ["min-k", "zlib"], "alpha": 0.01, "k": 0.3, "twins": 2},
        {"quick": True, "twinless": True, "ordered": False, "no_cache": True, "fail_on": "evidence"},
        {"reference": "none", "permutations": 5000, "threads": 1, "batch_size": 4, "dtype": "float32"},
        {"order_shards": 6, "order_permutations": 7, "device": "cpu", "field": "question"},
    ],
)
def test_the_command_reads_back_as_the_same_audit(changes, monkeypatch):
    config = AuditConfig(model="fake:clean", benchmark="sample", **changes)
    assert parsed(command_line(config), monkeypatch) == config


def test_odd_names_are_quoted_and_a_model_named_like_a_command_takes_the_long_form(tmp_path, monkeypatch):
    questions = tmp_path / "my questions (v2).jsonl"
    questions.write_text('{"question": "Ann has 3 apples."}\n')
    controls = tmp_path / "late $HOME.jsonl"
    controls.write_text('{"question": "Bo has 4 pens."}\n')
    config = AuditConfig(
        model="fake:clean", benchmark=str(questions), control=str(controls), cache=str(tmp_path)
    )
    command = command_line(config)
    assert f"'{questions}'" in command and f"'{controls}'" in command
    assert parsed(command, monkeypatch) == config
    # a model folder named like a command: the long form, which reads it as the model
    monkeypatch.chdir(tmp_path)
    (tmp_path / "report").mkdir()
    (tmp_path / "report" / "config.json").write_text("{}")
    config = AuditConfig(model="report", benchmark="sample")
    assert command_line(config) == "contamcheck run --model report --benchmark sample"
    assert parsed(command_line(config), monkeypatch) == config
