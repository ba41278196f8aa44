"""The cache where things go wrong around it: a folder that is not a cache, an empty name, a full
disk, a damaged entry, a newer contamcheck's file, a conversion killed half-way, a lock held long."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import threading
import time

import pytest

from contamcheck.backends.hf import _remove_outdated_copies
from contamcheck.cli import main
from contamcheck.errors import RuntimeFailure
from contamcheck.evidence import cache as cache_module
from contamcheck.evidence.cache import TAG_SIGNATURE, EvidenceCache

AUDIT = ["fake:clean", "sample", "-n", "20", "--no-order", "--json"]


def test_clear_deletes_nothing_in_a_folder_that_is_no_cache(tmp_path, capsys):
    project = tmp_path / "project"
    (project / "converted").mkdir(parents=True)
    (project / "converted" / "tool.py").write_text("source", encoding="utf-8")
    (project / "nulls").mkdir()
    (project / "nulls" / "results.csv").write_text("a,b", encoding="utf-8")
    assert main(["cache", "clear", "--cache", str(project)]) == 2
    err = capsys.readouterr().err
    assert "holds no contamcheck cache" in err and "nothing was deleted" in err
    assert (project / "converted" / "tool.py").exists() and (project / "nulls" / "results.csv").exists()
    assert main(["cache", "info", "--cache", str(project)]) == 0
    assert "(no contamcheck cache here: no evidence.sqlite3, no CACHEDIR.TAG)" in capsys.readouterr().out


def test_an_audits_cache_is_tagged_and_cleared_and_an_untagged_older_one_too(tmp_path, capsys):
    cache = tmp_path / "cache"
    assert main([*AUDIT, "--cache", str(cache)]) == 0
    capsys.readouterr()
    assert TAG_SIGNATURE in (cache / "CACHEDIR.TAG").read_text(encoding="utf-8")  # backup tools skip it
    (cache / "CACHEDIR.TAG").unlink()  # a cache made before the tag: its evidence file says it
    assert main(["cache", "clear", "--cache", str(cache)]) == 0
    assert "removed 93 evidence entries, and 1 other file " in capsys.readouterr().out  # a null table


def test_a_folder_with_other_files_is_used_as_the_cache_but_never_tagged(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")  # --cache . in a project, say
    assert main([*AUDIT, "--cache", str(tmp_path)]) == 0
    capsys.readouterr()
    assert (tmp_path / "evidence.sqlite3").exists() and not (tmp_path / "CACHEDIR.TAG").exists()


def test_an_empty_cache_name_is_refused_not_taken_for_the_current_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "converted").mkdir()
    (tmp_path / "converted" / "tool.py").write_text("source", encoding="utf-8")
    for command in (
        [*AUDIT, "--cache", ""],
        ["cache", "clear", "--cache", ""],
        ["cache", "info", "--cache", " "],
    ):
        assert main(command) == 2
        assert "--cache is empty" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["converted", "tool.py"]  # nothing made or lost


def _filling(monkeypatch: pytest.MonkeyPatch, pages: int) -> None:
    """Each cache opened from now on may hold at most ``pages`` pages: SQLite's own "database or
    disk is full" when it would grow past them, as on a full disk."""
    opened = EvidenceCache._open

    def _open(self: EvidenceCache) -> sqlite3.Connection:
        db = opened(self)
        db.execute(f"PRAGMA max_page_count = {pages}")
        return db

    monkeypatch.setattr(EvidenceCache, "_open", _open)


def test_a_cache_that_fills_up_stops_the_audit_with_the_fix_and_keeps_what_it_stored(
    tmp_path, monkeypatch, capsys
):
    cache = tmp_path / "cache"
    with monkeypatch.context() as patch:
        _filling(patch, 12)
        assert main([*AUDIT, "-n", "60", "--cache", str(cache)]) == 3
    err = capsys.readouterr().err
    assert "is full (database or disk is full). Free space on its disk" in err
    assert "This is a bug" not in err and "Traceback" not in err
    stored = EvidenceCache(cache).summary()["models"][0]["entries"]
    assert stored > 0  # the batches written before it filled are kept …
    assert main([*AUDIT, "-n", "60", "--cache", str(cache), "-q"]) == 0  # … and the audit resumes
    capsys.readouterr()


def test_clear_empties_a_cache_with_no_room_left_even_for_a_deletion(tmp_path, monkeypatch):
    cache = EvidenceCache(tmp_path)
    cache.put_many("ns", {"a": "x", "b": "y"})

    def no_room() -> None:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(cache, "_transaction", no_room)
    assert cache.clear()["entries"] == 2
    monkeypatch.undo()
    assert cache.get_many("ns", ["a", "b"]) == {} and cache.summary()["models"] == []
    with pytest.raises(RuntimeFailure, match="is full"):
        monkeypatch.setattr(cache, "_transaction", no_room)
        cache.put_many("ns", {"c": "z"})


def test_a_damaged_entry_is_computed_again_and_said(tmp_path, capsys):
    cache = tmp_path / "cache"
    assert main([*AUDIT, "--cache", str(cache)]) == 0
    clean = json.loads(capsys.readouterr().out)
    with sqlite3.connect(cache / "evidence.sqlite3") as db:
        scored = db.execute("SELECT key, value FROM evidence WHERE kind = 'score' LIMIT 2").fetchall()
        (generated,) = db.execute("SELECT key FROM evidence WHERE kind = 'generate' LIMIT 1").fetchone()
        for key, value in (
            (scored[0][0], os.urandom(9)),  # not token statistics
            (scored[1][0], scored[1][1][:-4]),  # one float short: decoded, it would lose a token
            (generated, b"\x80\xff"),  # no UTF-8
        ):
            db.execute("UPDATE evidence SET value = ? WHERE key = ?", (value, key))
    assert main([*AUDIT, "--cache", str(cache)]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["verdict"] == clean["verdict"] and again["tests"] == clean["tests"]
    assert any("damaged entr" in warning and "computed again" in warning for warning in again["warnings"])
    assert again["run"]["evidence"]["model"]["computed"] == 3
    tail = " of the evidence cache removed and computed again."
    assert {f"2 damaged entries{tail}", f"1 damaged entry{tail}"} <= set(again["warnings"])  # scores, text
    assert main([*AUDIT, "--cache", str(cache)]) == 0  # and stored whole this time
    assert json.loads(capsys.readouterr().out)["run"]["evidence"]["model"]["computed"] == 0


def test_a_newer_contamcheck_s_cache_is_left_as_it_is(tmp_path, capsys):
    cache = tmp_path / "cache"
    assert main([*AUDIT, "--cache", str(cache), "-q"]) == 0
    with sqlite3.connect(cache / "evidence.sqlite3") as db:
        db.execute("PRAGMA user_version = 2")
    before = sorted(p.name for p in cache.iterdir())
    content = (cache / "evidence.sqlite3").read_bytes()
    capsys.readouterr()
    assert main([*AUDIT, "--cache", str(cache)]) == 2
    assert "was written by a newer contamcheck (cache schema 2; this one uses 1)" in capsys.readouterr().err
    assert main(["cache", "info", "--cache", str(cache)]) == 0
    assert "written by a newer contamcheck (cache schema 2" in capsys.readouterr().out
    assert sorted(p.name for p in cache.iterdir()) == before  # not moved aside, nothing added
    assert (cache / "evidence.sqlite3").read_bytes() == content  # nor written to (not even to WAL)


def test_a_database_of_another_kind_under_the_caches_name_is_set_aside(tmp_path, capsys):
    (tmp_path / "cache").mkdir()
    with sqlite3.connect(tmp_path / "cache" / "evidence.sqlite3") as db:
        db.execute("CREATE TABLE evidence (a, b)")
        db.execute("PRAGMA user_version = 1")
    assert main([*AUDIT, "--cache", str(tmp_path / "cache")]) == 0
    warnings = json.loads(capsys.readouterr().out)["warnings"]
    assert any("its table evidence has the columns ['a', 'b']" in w and "moved it to" in w for w in warnings)
    assert len(list((tmp_path / "cache").glob("evidence.sqlite3.damaged-*"))) == 1


def test_a_conversion_killed_half_way_is_removed_by_the_next_and_not_counted(tmp_path, capsys):
    converted = tmp_path / "cache" / "converted"
    converted.mkdir(parents=True)
    (tmp_path / "cache" / "CACHEDIR.TAG").write_text(TAG_SIGNATURE + " contamcheck", encoding="utf-8")
    host = socket.gethostname()
    dead = converted / f".staging-999999999@{host}-abc"  # no such process here: killed
    running = converted / f".staging-{os.getpid()}@{host}-abc"  # this one: a conversion under way
    slow = converted / f".staging-{os.getpid()}@{host}-slow"  # under way for over an hour: kept
    elsewhere = converted / ".staging-12@other-host-abc"  # another machine's, just started: kept
    abandoned = converted / ".staging-12@other-host-old"  # another machine's, over an hour: gone
    for folder in (dead, running, slow, elsewhere, abandoned):
        folder.mkdir()
        (folder / "model.safetensors").write_bytes(b"\0" * 100)
    for folder in (slow, abandoned):
        os.utime(folder, (time.time() - 7200, time.time() - 7200))
    assert main(["cache", "info", "--cache", str(tmp_path / "cache")]) == 0
    assert "models converted" not in capsys.readouterr().out  # half-made copies are not models
    _remove_outdated_copies(converted)
    assert sorted(p.name for p in converted.iterdir()) == sorted([running.name, slow.name, elsewhere.name])


def _hold_the_write_lock(path, seconds: float) -> threading.Thread:
    """Another process's long transaction (an audit stopped with Ctrl-Z mid-write, a sqlite3 shell)."""
    held = threading.Event()

    def hold() -> None:
        db = sqlite3.connect(path, isolation_level=None)
        db.execute("BEGIN IMMEDIATE")
        held.set()
        time.sleep(seconds)
        db.execute("ROLLBACK")
        db.close()

    thread = threading.Thread(target=hold)
    thread.start()
    held.wait()
    return thread


def test_a_write_that_waits_for_another_process_is_said_and_goes_through(tmp_path, monkeypatch):
    monkeypatch.setattr(cache_module, "WAIT_STEP_S", 0.2)
    EvidenceCache(tmp_path).close()
    heard: list[bool | None] = []
    holder = _hold_the_write_lock(tmp_path / "evidence.sqlite3", 1.0)
    cache = EvidenceCache(tmp_path, on_wait=heard.append)  # opening an existing cache writes nothing
    assert heard == []
    cache.put_many("m", {"k": "v"})
    holder.join()
    # heard at each try (a cancel must not wait for the lock), then once that it went through
    assert heard[-1] is False and heard[:-1] and set(heard[:-1]) == {True}
    assert cache.get_many("m", ["k"]) == {"k": "v"}
    cache.close()


def test_a_lock_held_past_the_wait_stops_with_the_cause_and_keeps_what_was_stored(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setattr(cache_module, "WAIT_STEP_S", 0.2)
    monkeypatch.setattr(cache_module, "BUSY_TIMEOUT_S", 1)
    assert main([*AUDIT, "--cache", str(tmp_path)]) == 0
    capsys.readouterr()
    before = EvidenceCache(tmp_path).summary()["models"][0]["entries"]
    holder = _hold_the_write_lock(tmp_path / "evidence.sqlite3", 3.0)
    try:
        # another model: its evidence is new, so it must be written
        assert (
            main(["fake:clean:strength=0", "sample", "-n", "20", "--no-order", "--cache", str(tmp_path)]) == 3
        )
    finally:
        holder.join()
    err = capsys.readouterr().err
    assert "stayed locked by another process for 1 s" in err and "Traceback" not in err
    assert "waiting for the evidence cache (another process is writing to it)" in err  # said, then failed
    assert EvidenceCache(tmp_path).summary()["models"][0]["entries"] == before


def test_clear_says_it_waits_for_a_lock(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(cache_module, "WAIT_STEP_S", 0.2)
    assert main([*AUDIT, "--cache", str(tmp_path)]) == 0
    capsys.readouterr()
    holder = _hold_the_write_lock(tmp_path / "evidence.sqlite3", 1.0)
    assert main(["cache", "clear", "--cache", str(tmp_path)]) == 0
    holder.join()
    captured = capsys.readouterr()
    assert "Waiting for the evidence cache: another process is writing to it" in captured.err
    assert "removed 93 evidence entries" in captured.out


def test_clear_counts_what_it_deleted_when_its_vacuum_waits_for_a_lock(tmp_path, monkeypatch):
    """VACUUM waiting past a try ran the whole clear again, which then counted 0 entries deleted
    (found by review)."""
    monkeypatch.setattr(cache_module, "WAIT_STEP_S", 0.2)
    cache = EvidenceCache(tmp_path)
    cache.put_many("m", {f"k{i}": "v" for i in range(50)})
    deleting = cache._delete_everything

    def then_a_lock() -> int:
        removed = deleting()
        _hold_the_write_lock(tmp_path / "evidence.sqlite3", 0.6)  # taken before VACUUM asks
        return removed

    monkeypatch.setattr(cache, "_delete_everything", then_a_lock)
    assert cache.clear()["entries"] == 50
    cache.close()
