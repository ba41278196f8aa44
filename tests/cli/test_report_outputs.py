"""--csv and --html: written after an audit in both forms, and re-rendered from a saved report."""

from __future__ import annotations

import csv
import errno
import os
import subprocess
import sys
import threading
from importlib import resources
from pathlib import Path

import pytest

from contamcheck import pipeline
from contamcheck.cli import main
from contamcheck.report import read_report, to_csv, to_html

SAMPLE = str(resources.files("contamcheck.benchmarks").joinpath("data/sample.jsonl"))
SAMPLE_PATH = Path(SAMPLE)
CHEATER = f"fake:memorise={SAMPLE}"
FAST = ["--permutations", "10000", "-n", "40", "--quiet"]


def outputs(folder: Path) -> tuple[Path, Path, Path]:
    return folder / "r.json", folder / "r.csv", folder / "r.html"


def test_short_form_writes_json_csv_and_html_that_agree(tmp_path):
    json_file, csv_file, html_file = outputs(tmp_path)
    files = ["-o", str(json_file), "--csv", str(csv_file), "--html", str(html_file)]
    code = main([CHEATER, "sample", *FAST, *files])
    assert code == 1
    report = read_report(json_file)
    assert csv_file.read_bytes().decode("utf-8") == to_csv(report)
    assert html_file.read_text(encoding="utf-8") == to_html(report)
    with csv_file.open(newline="", encoding="utf-8") as stream:
        assert len(list(csv.DictReader(stream))) == report.sample.tested == 40
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.csv", "r.html", "r.json"]  # no temporaries
    mask = os.umask(0)
    os.umask(mask)
    for path in (json_file, csv_file, html_file):  # readable as any new file is, not mkstemp's 0600
        assert path.stat().st_mode & 0o777 == 0o666 & ~mask


def test_long_form_takes_the_same_options(tmp_path):
    _, csv_file, html_file = outputs(tmp_path)
    files = ["--csv", str(csv_file), "--html", str(html_file)]
    code = main(["run", "--model", "fake:clean", "--benchmark", "sample", *FAST, *files])
    assert code == 0
    assert csv_file.read_text(encoding="utf-8").startswith("id,text,twin,completion_score,")
    assert "No evidence found" in html_file.read_text(encoding="utf-8")


def test_report_command_renders_again_without_any_model_work(tmp_path, monkeypatch, capsys):
    json_file, csv_file, html_file = outputs(tmp_path)
    assert main([CHEATER, "sample", *FAST, "-o", str(json_file)]) == 1
    monkeypatch.setattr(pipeline, "audit", lambda *a, **k: pytest.fail("report ran an audit"))
    code = main(["report", str(json_file), "--html", str(html_file), "--csv", str(csv_file)])
    assert code == 1  # the saved verdict's exit code
    out = capsys.readouterr().out
    assert "Likely contaminated" in out  # still prints the report on the terminal
    report = read_report(json_file)
    assert csv_file.read_bytes().decode("utf-8") == to_csv(report)
    assert html_file.read_text(encoding="utf-8") == to_html(report)


@pytest.mark.parametrize("flag", ["--csv", "--html"])
def test_unwritable_outputs_fail_before_any_work(flag, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(pipeline, "audit", lambda *a, **k: pytest.fail("audit ran"))
    missing = str(tmp_path / "no" / "out")
    code = main(["fake:clean", "sample", flag, missing])
    err = capsys.readouterr().err
    assert code == 2 and flag in err and "does not exist" in err
    code = main(["fake:clean", "sample", flag, str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and flag in err and "is a directory" in err  # click's own check
    # the report command checks before it reads the report, too
    code = main(["report", str(tmp_path / "absent.json"), flag, missing])
    assert code == 2 and "does not exist" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("outputs_given", "message"),
    [
        (["-o", "r.json", "--csv", "r.json"], "Two outputs name the same file"),
        (["-o", ""], "--output needs a file name, got ''"),
        (["-o", "-"], "--json prints the report on stdout"),
        (["-o", "newdir/"], "ends with a slash"),
        (["--html", "/proc/report.html"], "can't write in '/proc'"),
    ],
)
def test_bad_output_names_fail_before_any_work(outputs_given, message, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(pipeline, "audit", lambda *a, **k: pytest.fail("audit ran"))
    assert main(["fake:clean", "sample", *outputs_given]) == 2
    assert message in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_an_output_that_names_an_input_is_refused_before_any_work(tmp_path, monkeypatch, capsys):
    """The benchmark, the control file or the saved report, by its name, a link or a second name."""
    monkeypatch.chdir(tmp_path)
    bench = tmp_path / "bench.jsonl"
    bench.write_text(SAMPLE_PATH.read_text())
    (tmp_path / "link.csv").symlink_to(bench)
    os.link(bench, tmp_path / "hard.html")
    (tmp_path / "m.gguf").write_bytes(b"GGUF weights")
    assert main(["fake:clean", "bench.jsonl", *FAST, "-o", "saved.json"]) == 0
    saved = (tmp_path / "saved.json").read_text()
    monkeypatch.setattr(pipeline, "audit", lambda *a, **k: pytest.fail("audit ran"))
    for command, said in (
        (["fake:clean", "bench.jsonl", "--csv", "bench.jsonl"], "--csv 'bench.jsonl' is the benchmark"),
        (["fake:clean", "bench.jsonl", "--csv", "link.csv"], "--csv 'link.csv' is the benchmark"),
        (["fake:clean", "bench.jsonl", "--html", "hard.html"], "--html 'hard.html' is the benchmark"),
        (["fake:clean", "sample", "--control", "bench.jsonl", "-o", "bench.jsonl"], "is the control file"),
        (["report", "saved.json", "--html", "saved.json"], "--html 'saved.json' is the saved report"),
        (["m.gguf", "sample", "--html", "m.gguf"], "--html 'm.gguf' is the model"),
        (["fake:clean", "sample", "--reference", "m.gguf", "--csv", "m.gguf"], "is the reference model"),
    ):
        assert main(command) == 2, command
        err = capsys.readouterr().err
        assert said in err and "would replace it" in err, err
    assert bench.read_text() == SAMPLE_PATH.read_text() and (tmp_path / "saved.json").read_text() == saved


def test_an_output_onto_the_evidence_cache_is_refused_before_any_work(tmp_path, monkeypatch, capsys):
    """A report written over the cache's file lost every score in it (the next audit found it
    unreadable and started again): the cache in use, the default one for `report`, or another
    audit's cache folder, by any name of its files."""
    cache = tmp_path / "cache"
    assert main(["fake:clean", "sample", *FAST, "--cache", str(cache), "-o", str(tmp_path / "r.json")]) == 0
    kept = (cache / "evidence.sqlite3").read_bytes()
    monkeypatch.setenv("CONTAMCHECK_CACHE", str(cache))
    monkeypatch.setattr(pipeline, "audit", lambda *a, **k: pytest.fail("audit ran"))
    for command in (
        ["fake:clean", "sample", "--cache", str(cache), "-o", str(cache / "evidence.sqlite3")],
        ["fake:clean", "sample", "--csv", str(cache / "evidence.sqlite3-wal")],  # the default cache
        ["fake:clean", "sample", "--no-cache", "--html", str(cache / "CACHEDIR.TAG")],  # a cache folder
        ["report", str(tmp_path / "r.json"), "-o", str(cache / "evidence.sqlite3")],
    ):
        assert main(command) == 2, command
        err = capsys.readouterr().err
        assert "is a file the evidence cache keeps" in err and "Give the output another name" in err
    assert (cache / "evidence.sqlite3").read_bytes() == kept
    assert main(["report", str(tmp_path / "r.json"), "-o", str(cache / "report.json")]) == 0  # beside it


def test_an_existing_output_that_cant_be_written_fails_before_any_work(tmp_path, monkeypatch, capsys):
    """Found before the audit, not after it: read-only to this user, or immutable even to root."""
    locked = tmp_path / "report.html"
    locked.write_text("kept")
    if os.geteuid() == 0:  # root writes through a file's mode: only the immutable flag stops it
        if subprocess.run(["chattr", "+i", str(locked)], capture_output=True).returncode != 0:
            pytest.skip("chattr +i is not available here")
    else:
        locked.chmod(0o444)
    monkeypatch.setattr(pipeline, "audit", lambda *a, **k: pytest.fail("audit ran"))
    try:
        assert main(["fake:clean", "sample", "--html", str(locked)]) == 2
    finally:
        if os.geteuid() == 0:
            subprocess.run(["chattr", "-i", str(locked)], check=True)
    err = capsys.readouterr().err
    assert f"--html {str(locked)!r} exists and can't be written" in err and "Traceback" not in err
    assert locked.read_text() == "kept"


def test_outputs_write_through_links_and_into_pipes_without_replacing_them(tmp_path):
    """A link's file is replaced, not the link; a pipe (as /dev/stdout or /dev/null) is written into."""
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "real.json")
    pipe = tmp_path / "pipe.csv"
    os.mkfifo(pipe)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(pipe.read_bytes()), daemon=True)
    reader.start()
    assert main(["fake:clean", "sample", *FAST, "-o", str(link), "--csv", str(pipe)]) == 0
    reader.join(30)
    assert link.is_symlink() and read_report(tmp_path / "real.json").verdict.code == "clean"
    assert pipe.is_fifo() and received[0].startswith(b"id,text,twin,")


def test_a_write_that_fails_is_a_runtime_failure_naming_the_file(tmp_path, monkeypatch, capsys):
    def disk_full(*_: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", disk_full)
    html = tmp_path / "r.html"
    assert main(["fake:clean", "sample", *FAST, "--html", str(html)]) == 3
    assert f"Can't write {str(html)!r}: No space left on device" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []  # and no temporary left behind


@pytest.mark.parametrize("command", [["fake:clean", "sample"], ["run"], ["report"]])
def test_help_lists_the_options(command, capsys):
    assert main([*command, "--help"]) == 0
    out = capsys.readouterr().out
    assert "--csv" in out and "--html" in out


@pytest.mark.parametrize("columns", ["40", "80", "200"])
def test_the_two_usage_lines_and_the_command_list_are_whole_at_any_width(columns, monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", columns)
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(
        "Usage: contamcheck MODEL BENCHMARK [OPTIONS]\n       contamcheck COMMAND [ARGS]...\n"
    )
    if columns != "40":  # click shortens a command's help to the width; none is cut at 80
        assert "..." not in out.split("Commands:")[1]


@pytest.mark.parametrize(
    "command",
    [["fake:clean", "sample"], ["run"], ["report"], ["serve"], ["cache", "info"], ["cache", "clear"]],
)
def test_every_command_that_can_fail_unexpectedly_takes_debug(command, capsys):
    """An unexpected error says "rerun with --debug": every command that can say it accepts it."""
    assert main([*command, "--help"]) == 0
    assert "--debug" in capsys.readouterr().out


def test_help_stays_free_of_the_renderers_heavy_imports():
    code = (
        "import sys; from contamcheck.cli import main; rc = main(['--help']); "
        "heavy = [m for m in ('matplotlib', 'jinja2') if m in sys.modules]; "
        "assert not heavy, heavy; sys.exit(rc)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


@pytest.mark.skipif(sys.platform == "darwin", reason="macOS file names are UTF-8 only")
def test_a_benchmark_whose_file_name_is_no_utf8_is_reported(tmp_path, monkeypatch, capsys):
    """Python reads the name's stray byte as a lone surrogate, which UTF-8 can't hold: the JSON and
    HTML reports failed at the audit's very end. The byte is shown as U+FFFD."""
    monkeypatch.chdir(tmp_path)
    name = os.fsdecode(b"we\xffird.jsonl")
    Path(name).write_text(SAMPLE_PATH.read_text())
    assert main(["fake:clean", name, *FAST, "-o", "r.json", "--html", "r.html", "--csv", "r.csv"]) == 0
    assert "Internal error" not in capsys.readouterr().err
    report = read_report("r.json")
    shown = "we\ufffdird.jsonl"
    assert report.benchmark.name == shown and report.benchmark.spec.endswith(shown)
    assert shown in Path("r.html").read_text(encoding="utf-8")
