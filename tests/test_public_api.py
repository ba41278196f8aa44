"""The package's top-level names: importable lazily, listed, and typed for a user's type checker."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys

import pytest

import contamcheck
from contamcheck.errors import ContamcheckError, InputError, ModelLoadError


def test_every_exported_name_imports_and_is_listed():
    for name in contamcheck.__all__:
        assert getattr(contamcheck, name) is not None, name
        assert name in dir(contamcheck), name
    public = [name for name in dir(contamcheck) if not name.startswith("_")]
    assert public == sorted(set(contamcheck.__all__) - {"__version__"})  # not Any, TYPE_CHECKING, ...
    assert contamcheck.ModelLoadError is ModelLoadError
    assert issubclass(ModelLoadError, ContamcheckError) and issubclass(InputError, ContamcheckError)


def test_a_misspelt_name_fails_at_import_with_its_name():
    result = subprocess.run(
        [sys.executable, "-c", "from contamcheck import Auditconfig"], capture_output=True, text=True
    )
    assert result.returncode == 1 and "Auditconfig" in result.stderr


def test_a_users_type_checker_sees_the_names_and_their_types(tmp_path):
    """The lazy names are typed: a misspelt import or a wrong device is a mypy error, not Any."""
    api = pytest.importorskip("mypy.api")

    script = tmp_path / "user.py"
    script.write_text(
        "from contamcheck import AuditConfig, Auditconfig, audit\n"
        'config = AuditConfig(model="m", benchmark="b", device="gpu")\n'
        "report = audit(config)\n"
        "reveal_type(report.verdict.code)\n",
        encoding="utf-8",
    )
    out, _, status = api.run(["--strict", "--cache-dir", str(tmp_path / "cache"), str(script)])
    assert status == 1
    assert 'has no attribute "Auditconfig"' in out and 'Argument "device" to "AuditConfig"' in out
    assert "Revealed type is \"Literal['likely'] | Literal['evidence']" in out  # audit's real return type


def test_importing_the_package_stays_light():
    """The names are lazy: ``import contamcheck`` loads neither torch nor the pipeline."""
    code = "import sys, contamcheck; assert not {'torch', 'contamcheck.pipeline'} & set(sys.modules)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_permutations_are_capped_where_alpha_would_ask_for_hours():
    from contamcheck import AuditConfig
    from contamcheck.config import MAX_PERMUTATIONS

    assert AuditConfig(model="m", benchmark="b").permutations_for(3) == 30_000
    assert AuditConfig(model="m", benchmark="b", alpha=1e-9).permutations_for(3) == MAX_PERMUTATIONS
    # 10 / alpha overflowed: the audit stopped at its end, after all the model's work (exit 3)
    assert AuditConfig(model="m", benchmark="b", alpha=1e-310).permutations_for(3) == MAX_PERMUTATIONS


def test_too_long_counts_the_bytes_linux_counts():
    from contamcheck.config import too_long

    assert not too_long("a" * 255) and too_long("a" * 256)  # a name: 255 bytes
    assert not too_long("é" * 127) and too_long("é" * 128)  # two bytes each
    assert not too_long("\udcff" * 255)  # an undecodable argv byte is one byte, not three
    assert too_long("/".join(["a" * 200] * 21))  # a path: under 4,096 bytes with its end


def test_the_unreachable_hub_message_knows_offline_mode_is_on(monkeypatch):
    from contamcheck import hub

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    message = hub.unreachable_message("the model 'x/y'", "Pass a local folder.")
    assert "offline mode is on (HF_HUB_OFFLINE)" in message and "set HF_HUB_OFFLINE=1" not in message
    monkeypatch.delenv("HF_HUB_OFFLINE")
    assert "set HF_HUB_OFFLINE=1" in hub.unreachable_message("the model 'x/y'", "Pass a local folder.")


def test_too_long_refuses_a_lone_surrogate_instead_of_raising():
    from contamcheck.config import too_long

    assert not too_long("\ud800x") and too_long("\ud800" * 100)


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ({"seed": 1.5}, "--seed must be a whole number (got 1.5, of type float)"),
        ({"limit": "20"}, "-n/--limit must be a whole number (got '20', of type str)"),
        ({"limit": True}, "-n/--limit must be a whole number (got True, of type bool)"),
        ({"permutations": 1000.5}, "--permutations must be a whole number or None"),
        ({"k": "0.2"}, "-k must be a number"),
        ({"alpha": None}, "--alpha must be a number"),
        ({"tests": "min-k"}, "--tests must be a list of test names"),
        ({"tests": ["zlib", None]}, "--tests must be a list of test names"),
        ({"quick": "no"}, "--quick must be True or False"),
        ({"ordered": "false"}, "--no-order (ordered) must be True or False"),
        ({"model": 5}, "MODEL must be text"),
        ({"reference": None}, "--reference must be text"),
    ],
)
def test_a_library_caller_s_wrong_type_is_an_input_error_before_any_work(given, said):
    """Was a TypeError or AttributeError from inside, for some (seed=1.5) after all the model's work."""
    with pytest.raises(InputError) as caught:
        contamcheck.AuditConfig(**{"model": "fake:clean", "benchmark": "sample", **given})
    assert said in str(caught.value) and caught.value.exit_code == 2


def test_paths_and_tuples_are_taken_and_a_config_cannot_be_changed_unchecked(tmp_path):
    from dataclasses import FrozenInstanceError, replace
    from pathlib import Path

    config = contamcheck.AuditConfig(
        model="fake:clean", benchmark=Path("sample"), cache=tmp_path, tests=("MIN-K", "zlib")
    )
    # a path object is a path, never the built-in of its name (Path("./sample") prints as "sample")
    assert (config.benchmark, config.cache, config.tests) == ("./sample", str(tmp_path), ("min-k", "zlib"))
    assert contamcheck.AuditConfig(model="m", benchmark="b", tests=["zlib", "min-k", "ZLIB"]).tests == (
        "zlib",
        "min-k",
    )  # a test named twice is one test
    assert contamcheck.AuditConfig(model=Path("gpt2"), benchmark="sample").model == "./gpt2"  # not a Hub id
    home = contamcheck.AuditConfig(model="fake:clean", benchmark=Path("~/b.jsonl"), cache=Path("~/.cache/cc"))
    assert (home.benchmark, home.cache) == ("~/b.jsonl", "~/.cache/cc")  # expanded where they are read
    import numpy as np

    assert contamcheck.AuditConfig(
        model="fake:clean",
        benchmark="sample",
        limit=np.int64(30),
        k=np.float32(0.25),
        tests=(t for t in ["zlib"]),
    ) == contamcheck.AuditConfig(model="fake:clean", benchmark="sample", limit=30, k=0.25, tests=["zlib"])
    with pytest.raises(FrozenInstanceError):
        config.alpha = 5.0  # type: ignore[misc]  # was accepted, and the audit ran with it
    with pytest.raises(InputError, match="--alpha must be between 0 and 1"):
        replace(config, alpha=5.0)


def test_audit_says_what_it_takes_when_given_something_else():
    with pytest.raises(TypeError, match=r"audit\(\) takes an AuditConfig, not str"):
        contamcheck.audit("fake:clean")  # type: ignore[arg-type]
    config = contamcheck.AuditConfig(model="fake:clean", benchmark="sample", no_cache=True)
    with pytest.raises(TypeError, match=r"progress must be callable as progress\(label, done, total\)"):
        contamcheck.audit(config, progress="bars")  # type: ignore[arg-type]
    # one that takes fewer failed only once the audit was under way (a black-box pass)
    with pytest.raises(TypeError, match=r"progress\(label, done, total\), not <lambda>\(label\)"):
        contamcheck.audit(config, progress=lambda label: None)  # type: ignore[arg-type,misc]
    contamcheck.audit(dataclasses.replace(config, limit=20, tests=("zlib",)), progress=print)  # no signature
    with pytest.raises(TypeError, match=r"store must be an evidence store .*not str"):
        contamcheck.audit(config, store="x")  # type: ignore[arg-type]
    with pytest.raises(
        TypeError, match=r"takes its settings as keywords, not a dict: AuditConfig\(\*\*settings\)"
    ):
        contamcheck.AuditConfig({"model": "fake:clean", "benchmark": "sample"})  # type: ignore[arg-type]


def test_a_report_is_read_from_a_path_and_its_tests_by_any_case(tmp_path):
    from contamcheck.report import read_report, to_json
    from contamcheck.report.io import ReportUnreadable

    for wrong in (None, 3, b"report.json"):
        with pytest.raises(TypeError, match=r"read_report takes the path of a saved \.json report"):
            read_report(wrong)  # type: ignore[arg-type]
    with pytest.raises(ReportUnreadable, match="path is empty"):
        read_report("")
    config = contamcheck.AuditConfig(
        model="fake:clean", benchmark="sample", limit=20, tests=["zlib"], no_cache=True
    )
    path = tmp_path / "r.json"
    path.write_text(to_json(contamcheck.audit(config)), encoding="utf-8")
    report = read_report(path)
    assert report.test("ZLIB") is report.test("zlib")
    with pytest.raises(KeyError, match="no test 'mink' in this report; it has zlib"):
        report.test("mink")


def test_an_audit_leaves_torchs_thread_count_as_it_found_it(tiny_setup):
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        config = contamcheck.AuditConfig(
            model=str(tiny_setup.clean),
            benchmark=str(tiny_setup.benchmark),
            threads=2,
            quick=True,
            reference="none",
            no_cache=True,
            limit=20,
        )
        contamcheck.audit(config, progress=lambda *_: None)
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize(
    ("keyword", "hint"),
    [
        ("no_order", "did you mean ordered=False?"),
        ("n", "did you mean limit?"),
        ("limt", "did you mean limit?"),
        ("output", "an output is no setting"),
        ("zzz", "its fields: model, benchmark, field, limit"),
        ("control_file", "did you mean control?"),
        ("progress", "progress is audit()'s: audit(config, progress=callback)"),
        ("low_memory", "--low-memory is the process's, not the audit's: call contamcheck.memory"),
    ],
)
def test_a_keyword_audit_config_has_not_is_named_with_what_was_meant(keyword, hint):
    """The command line's spellings are what a Python caller tries first (a black-box pass)."""
    with pytest.raises(TypeError, match=rf"AuditConfig has no setting '{keyword}': {re.escape(hint)}"):
        contamcheck.AuditConfig(model="fake:clean", benchmark="sample", **{keyword: 1})
    config = contamcheck.AuditConfig("fake:clean", "sample", limit=5)  # positional and keyword as before
    assert dataclasses.replace(config, seed=2).seed == 2 and config.limit == 5
