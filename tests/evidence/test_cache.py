"""The SQLite evidence cache: exact round trips, namespaces, digests, damage, maintenance."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from contamcheck import AuditConfig, pipeline
from contamcheck.backends import TokenStats
from contamcheck.cli import main
from contamcheck.errors import InputError
from contamcheck.evidence.cache import EvidenceCache, decode, encode


def stats(n: int, moments: bool = True, truncated: bool = False) -> TokenStats:
    rng = np.random.default_rng(n)
    values = rng.normal(size=(3, n)).astype(np.float32)
    return TokenStats(values[0], values[1] if moments else None, values[2] if moments else None, truncated)


@pytest.mark.parametrize("value", [stats(7), stats(0), stats(5, moments=False), stats(3, truncated=True)])
def test_token_statistics_round_trip_exactly(value):
    back = decode(*encode(value))
    assert isinstance(back, TokenStats)
    np.testing.assert_array_equal(back.logprobs, value.logprobs)
    assert back.truncated == value.truncated
    if value.mean is None:
        assert back.mean is None and back.std is None
    else:
        np.testing.assert_array_equal(back.mean, value.mean)
        np.testing.assert_array_equal(back.std, value.std)


def test_generations_round_trip_including_odd_text():
    text = "def f():\n    return '<b>&amp;</b>' # \u00e9\u4e2d\U0001f600"
    assert decode(*encode(text)) == text


def test_an_entry_is_written_once_and_a_second_writer_does_not_replace_it(tmp_path):
    first, second = EvidenceCache(tmp_path), EvidenceCache(tmp_path)  # two processes, one file
    first.put_many("m", {"k": stats(4)})
    second.put_many("m", {"k": stats(9), "new": "text"})
    for reader in (first, EvidenceCache(tmp_path)):
        found = reader.get_many("m", ["k", "new"])
        np.testing.assert_array_equal(found["k"].logprobs, stats(4).logprobs)
        assert found["new"] == "text"


def test_namespaces_keep_models_apart_and_survive_reopening(tmp_path):
    cache = EvidenceCache(tmp_path)
    cache.put_many("model-a", {"k1": stats(4), "k2": "continuation"})
    cache.put_many("model-b", {"k1": stats(9)})
    cache.close()
    reopened = EvidenceCache(tmp_path)
    a = reopened.get_many("model-a", ["k1", "k2", "k3"])
    assert set(a) == {"k1", "k2"} and a["k2"] == "continuation"
    assert reopened.get_many("model-b", ["k1"])["k1"].num_tokens == 9
    assert reopened.get_many("model-c", ["k1"]) == {}


def test_many_keys_are_fetched_in_chunks(tmp_path):
    cache = EvidenceCache(tmp_path)
    cache.put_many("m", {f"k{i}": f"v{i}" for i in range(1300)})
    assert len(cache.get_many("m", [f"k{i}" for i in range(1400)])) == 1300


def test_model_info_and_file_digest_memo(tmp_path):
    cache = EvidenceCache(tmp_path / "c")
    cache.put_model_info("ns", {"num_parameters": 123})
    assert cache.get_model_info("ns") == {"num_parameters": 123}
    weights = tmp_path / "w.bin"
    weights.write_bytes(b"abc")
    first = cache.file_digest(weights)
    assert first == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"  # sha256("abc")
    weights.write_bytes(b"abcd")  # new size: digested again
    assert cache.file_digest(weights) != first


def test_a_damaged_database_is_moved_aside_not_deleted(tmp_path):
    (tmp_path / "evidence.sqlite3").write_bytes(b"this is not a database" * 100)
    cache = EvidenceCache(tmp_path)
    assert cache.notes and "moved it to" in cache.notes[0]
    assert list(tmp_path.glob("evidence.sqlite3.damaged-*"))
    cache.put_many("m", {"k": "v"})
    assert cache.get_many("m", ["k"]) == {"k": "v"}


def damaged_cache(folder: Path) -> None:
    """A cache that opens (its first page is intact) with garbage over every other page."""
    cache = EvidenceCache(folder)
    cache.put_many("m", {f"k{i}": stats(200) for i in range(400)})
    cache.put_model_info("m", {"name": "a model"})
    cache.close()
    path = folder / "evidence.sqlite3"
    size = path.stat().st_size
    with open(path, "r+b") as file:
        file.seek(4096)
        file.write(b"\xff" * (size - 4096))


@pytest.mark.parametrize("operation", ["get", "summary", "clear"])
def test_damage_met_after_opening_sets_the_file_aside_and_carries_on(tmp_path, operation):
    damaged_cache(tmp_path)
    cache = EvidenceCache(tmp_path)  # opens: SQLite finds the damage only where it reads
    assert not cache.notes
    if operation == "get":
        assert cache.get_many("m", [f"k{i}" for i in range(400)]) == {}
    elif operation == "summary":
        assert cache.summary()["models"] == []
    else:
        assert cache.clear()["files"] == 1  # the damaged file, set aside, then removed
    assert cache.notes and "malformed" in cache.notes[0] and "moved it to" in cache.notes[0]
    aside = list(tmp_path.glob("evidence.sqlite3.damaged-*"))
    assert len(aside) == (0 if operation == "clear" else 1)
    cache.put_many("m", {"k0": "again"})
    assert cache.get_many("m", ["k0"]) == {"k0": "again"}


def test_the_cache_commands_and_an_audit_get_past_a_damaged_cache(tmp_path, capsys):
    """Was "Internal error (DatabaseError: database disk image is malformed)", exit 3, for all three."""
    audit = ["fake:clean", "sample", "-n", "30", "--permutations", "2000", "--json"]
    assert main([*audit, "--cache", str(tmp_path / "audit")]) == 0  # its evidence, to be read back
    capsys.readouterr()
    before: dict[str, bytes] = {}
    for name, command in (("info", ["cache", "info"]), ("audit", audit), ("clear", ["cache", "clear"])):
        damaged_cache(tmp_path / name)
        before[name] = (tmp_path / name / "evidence.sqlite3").read_bytes()
        assert main([*command, "--cache", str(tmp_path / name)]) == 0, command
        out, err = capsys.readouterr()
        said = json.loads(out)["warnings"] if name == "audit" else [out] if name == "info" else [err]
        damage = "removed with the rest" if name == "clear" else "malformed"
        assert "Internal error" not in err and any(damage in note for note in said), (out, err)
    assert not list((tmp_path / "clear").glob("evidence.sqlite3.damaged-*"))  # set aside, then removed
    # looking changes nothing: the damaged file stays where it was, as it was, for the next audit
    assert (tmp_path / "info" / "evidence.sqlite3").read_bytes() == before["info"]
    assert not list((tmp_path / "info").glob("evidence.sqlite3.damaged-*"))


def test_a_cache_path_that_is_a_file_says_where_the_name_came_from(tmp_path, monkeypatch, capsys):
    """CONTAMCHECK_CACHE naming a file: every command says so and names the variable (info and
    clear said "nothing stored", an audit "File exists. Pass --cache DIR")."""
    afile = tmp_path / "afile"
    afile.write_text("not a folder")
    monkeypatch.setenv("CONTAMCHECK_CACHE", str(afile))
    audit = ["fake:clean", "sample"]
    commands = ((["cache", "info"], ""), (["cache", "clear"], ""), (audit, " or --no-cache"))
    for command, more in commands:
        assert main(command) == 2, command
        err = capsys.readouterr().err
        assert f"The cache folder {str(afile)!r} is a file. Fix or unset CONTAMCHECK_CACHE" in err, err
        assert err.rstrip().endswith(f"pass --cache DIR{more}."), err
    assert afile.read_text() == "not a folder"


def test_a_cache_path_through_a_file_is_refused_by_every_cache_command(tmp_path, capsys):
    """`cache info` and `cache clear` said "nothing stored" for a folder under a file, which an
    audit refuses; now all of them say which file stands in the way."""
    afile = tmp_path / "afile"
    afile.write_text("not a folder")
    for command in (["info"], ["clear"], ["clear", "--unread"]):
        assert main(["cache", *command, "--cache", str(afile / "sub" / "deeper")]) == 2, command
        out, err = capsys.readouterr()
        assert out == "" and f"{str(afile)!r} is a file. Pass --cache with another folder." in err, err
    assert afile.read_text() == "not a folder"
    assert main(["cache", "info", "--cache", str(tmp_path / "none" / "yet")]) == 0  # simply not made yet
    assert "nothing stored yet" in capsys.readouterr().out
    for command in (["cache", "info"], ["cache", "clear"], ["fake:clean", "sample"]):  # a device: no file
        for cache in ("/dev/null", "/dev/null/sub"):
            assert main([*command, "--cache", cache]) == 2
            assert "'/dev/null' is no folder (a device, a pipe or a socket)" in capsys.readouterr().err


def test_a_cache_given_with_cache_that_cant_be_made_suggests_no_cache_instead(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("not a folder")
    assert main(["fake:clean", "sample", "--cache", str(afile / "inside")]) == 2  # can't be made
    err = capsys.readouterr().err
    assert err.rstrip().endswith("Pass --cache with another folder, or --no-cache instead of --cache."), err


def test_a_misuse_is_raised_and_the_cache_kept(tmp_path):
    """Only damage sets the file aside: a closed connection is a bug, not a reason to drop the cache."""
    cache = EvidenceCache(tmp_path)
    cache.put_many("m", {"k": "v"})
    cache.close()
    with pytest.raises(sqlite3.ProgrammingError):
        cache.get_many("m", ["k"])
    assert not cache.notes and not list(tmp_path.glob("evidence.sqlite3.damaged-*"))
    assert EvidenceCache(tmp_path).get_many("m", ["k"]) == {"k": "v"}


def test_a_second_cache_on_the_damaged_file_opens_the_fresh_one_the_first_made(tmp_path):
    """Two processes on one damaged cache: the second to meet the damage must not move the first's
    fresh file aside (nor delete its WAL)."""
    damaged_cache(tmp_path)
    first, second = EvidenceCache(tmp_path), EvidenceCache(tmp_path)
    assert first.get_many("m", ["k0"]) == {} and len(first.set_aside) == 1
    first.put_many("m", {"new": "kept"})
    assert second.get_many("m", ["new"]) == {"new": "kept"} and second.set_aside == []
    assert len(list(tmp_path.glob("evidence.sqlite3.damaged-*"))) == 1
    first.close()
    second.close()
    assert EvidenceCache(tmp_path).get_many("m", ["new"]) == {"new": "kept"}


def test_an_intact_cache_it_cannot_write_is_an_input_error_and_kept(tmp_path, monkeypatch):
    """Read-only or locked is not damaged: the file stays where it is, with its evidence."""
    EvidenceCache(tmp_path).put_many("m", {"k": "v"})

    def read_only(self: EvidenceCache) -> None:
        raise sqlite3.OperationalError("attempt to write a readonly database")

    monkeypatch.setattr(EvidenceCache, "_open", read_only)
    with pytest.raises(InputError, match=r"readonly database.*--no-cache"):
        EvidenceCache(tmp_path)
    monkeypatch.undo()
    assert not list(tmp_path.glob("*.damaged-*"))
    assert EvidenceCache(tmp_path).get_many("m", ["k"]) == {"k": "v"}


def test_a_read_only_cache_file_is_named(tmp_path, monkeypatch):
    EvidenceCache(tmp_path).put_many("m", {"k": "v"})
    monkeypatch.setattr(os, "access", lambda path, mode: Path(path).name != "evidence.sqlite3")
    with pytest.raises(InputError, match="is read-only"):
        EvidenceCache(tmp_path)
    assert not list(tmp_path.glob("*.damaged-*"))


def test_summary_and_clear(tmp_path):
    cache = EvidenceCache(tmp_path)
    cache.put_model_info("ns", {"num_parameters": 1})
    cache.put_many("ns", {"a": "x", "b": "y"})
    summary = cache.summary()
    assert summary["models"][0]["entries"] == 2 and summary["bytes"] > 0
    assert summary["converted"] == {"bytes": 0, "count": 0}
    (tmp_path / "nulls").mkdir()
    (tmp_path / "nulls" / "table.npy").write_bytes(b"\0" * 1000)
    (tmp_path / "evidence.sqlite3.damaged-1").write_bytes(b"\0" * 1000)  # an unreadable one, set aside
    assert cache.summary()["nulls"] == {"bytes": 1000, "count": 1}
    removed = cache.clear()
    assert removed["entries"] == 2 and removed["files"] == 2 and removed["bytes"] >= 2000
    assert cache.summary()["models"] == []
    left = {p.name for p in tmp_path.iterdir()} - {"evidence.sqlite3-wal", "evidence.sqlite3-shm"}
    assert left == {"evidence.sqlite3", "CACHEDIR.TAG"}  # still a cache: the tag stays


def test_cache_info_tells_apart_two_identities_under_one_name(tmp_path, capsys):
    """A served model whose weights changed keeps its name: each identity gets a line of its own."""
    cache = EvidenceCache(tmp_path)
    stored = {
        "openai:03441cdb3de6f5de112272e4|backend=openai": 14,
        "openai:cc78|backend=openai": 54,
        "m|x=1": 1,
    }
    for namespace, entries in stored.items():
        cache.put_model_info(namespace, {"name": "served" if namespace.startswith("openai") else "alone"})
        cache.put_many(namespace, {f"k{i}": "v" for i in range(entries)})
    cache.close()
    assert main(["cache", "info", "--cache", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "served [openai:03441cdb3de6f5de1…; backend=openai]: 14 entries" in out
    assert "served [openai:cc78; backend=openai]: 54 entries" in out and "alone: 1 entries" in out


def test_an_audit_checks_its_cache_before_it_reads_the_benchmark(tmp_path, capsys, monkeypatch):
    """A cache it could not keep stopped an audit only after its benchmark was read and planned."""
    afile = tmp_path / "afile"
    afile.write_text("not a folder")

    def plan_audit(config, progress=None):
        raise AssertionError("the benchmark was read before the cache was checked")

    monkeypatch.setattr(pipeline, "plan_audit", plan_audit)
    for cache, said in ((afile, "is a file"), (afile / "inside", f"{str(afile)!r} is a file")):
        assert main(["fake:clean", "sample", "--cache", str(cache)]) == 2
        err = capsys.readouterr().err
        assert said in err and "Internal error" not in err, err
    assert afile.read_text() == "not a folder"
    EvidenceCache.check(tmp_path / "new" / "deeper")  # can be made: it is, by the cache, not the check
    assert not (tmp_path / "new").exists()
    (tmp_path / "link").symlink_to(tmp_path / "gone")
    with pytest.raises(InputError, match="is a broken link"):
        EvidenceCache.check(tmp_path / "link")


def test_unwritable_cache_folder_is_a_clear_input_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(InputError, match="cache folder"):
        EvidenceCache(blocker / "sub")


def test_wal_mode_is_on(tmp_path):
    EvidenceCache(tmp_path).put_many("m", {"k": "v"})
    mode = sqlite3.connect(tmp_path / "evidence.sqlite3").execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def audited_cache(folder: Path) -> Path:
    audit = ["fake:clean", "sample", "-n", "30", "--permutations", "2000", "-q", "--cache", str(folder)]
    assert main(audit) == 0
    return folder / "evidence.sqlite3"


def test_cache_info_reads_and_changes_nothing(tmp_path, capsys):
    database = audited_cache(tmp_path / "cache")
    files = {path.name: path.read_bytes() for path in database.parent.iterdir() if path.is_file()}
    capsys.readouterr()
    assert main(["cache", "info", "--cache", str(tmp_path / "cache")]) == 0
    assert "fake:clean" in capsys.readouterr().out
    # a closed cache is read as an immutable file: not even SQLite's log and index files appear
    assert {path.name: path.read_bytes() for path in database.parent.iterdir() if path.is_file()} == files


def writer_with_a_log(database: Path) -> sqlite3.Connection:
    """A connection that has written entries into the write-ahead log, not yet into the file (an
    audit running, or one cut off)."""
    writer = sqlite3.connect(database, isolation_level=None)
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute(
        "INSERT INTO evidence (namespace, key, kind, value, created) VALUES ('m|x', 'k', 'text', x'00', 0)"
    )
    assert Path(f"{database}-wal").stat().st_size > 0
    return writer


def test_cache_info_counts_what_an_audit_still_running_wrote(tmp_path, capsys):
    database = audited_cache(tmp_path / "cache")
    capsys.readouterr()
    writer = writer_with_a_log(database)
    try:
        models = EvidenceCache.inspect(database.parent)["models"]
    finally:
        writer.close()
    assert "m|x" in [entry["namespace"] for entry in models]  # read from the log


def test_cache_info_reads_a_cache_it_cannot_open_for_writing(tmp_path, capsys, monkeypatch):
    """A folder this user can't write can't hold SQLite's index of a write-ahead log, so a
    read-only connection fails there (the black-box pass: exit 2, "not writable"); info then
    reads the file as immutable and says the log's entries are not counted. Simulated, since root
    (as in CI) may write anywhere."""
    database = audited_cache(tmp_path / "shared")
    capsys.readouterr()
    writer = writer_with_a_log(database)
    connect = sqlite3.connect
    tried: list[str] = []

    def read_only_folder(target, *args, **kwargs):
        tried.append(str(target))
        if "mode=ro" in str(target):
            raise sqlite3.OperationalError("unable to open database file")
        return connect(target, *args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", read_only_folder)
    try:
        assert main(["cache", "info", "--cache", str(tmp_path / "shared")]) == 0
    finally:
        writer.close()
    out, err = capsys.readouterr()
    assert "fake:clean" in out and "entries" in out and err == ""
    assert "(not all: the entries of the audit that is running, or was cut off, are not counted" in out
    assert [t.rsplit("?", 1)[1] for t in tried] == ["mode=ro", "immutable=1"]
    assert database.is_file() and not list(database.parent.glob("*.damaged-*"))


def test_cache_info_says_a_file_it_may_not_open_is_not_a_damaged_one(tmp_path, capsys, monkeypatch):
    """Its permissions, not damage: the next audit would refuse it, not set it aside (review)."""
    audited_cache(tmp_path / "cache")
    capsys.readouterr()

    def refused(target, *args, **kwargs):
        raise sqlite3.OperationalError("unable to open database file")

    monkeypatch.setattr(sqlite3, "connect", refused)
    assert main(["cache", "info", "--cache", str(tmp_path / "cache")]) == 0
    out = capsys.readouterr().out
    assert "can't be opened (unable to open database file): check its owner and permissions" in out
    assert "moves it aside" not in out


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write to a folder without write permission")
def test_cache_info_reads_a_cache_in_a_folder_without_write_permission(tmp_path, capsys):
    folder = audited_cache(tmp_path / "shared").parent
    capsys.readouterr()
    folder.chmod(0o555)
    try:
        assert main(["cache", "info", "--cache", str(folder)]) == 0
        assert "fake:clean" in capsys.readouterr().out
    finally:
        folder.chmod(0o755)


def test_cache_info_on_a_file_that_is_no_database_says_so_and_leaves_it(tmp_path, capsys):
    folder = tmp_path / "junk"
    folder.mkdir()
    (folder / "evidence.sqlite3").write_text("junk\n")
    assert main(["cache", "info", "--cache", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "unreadable (file is not a database)" in out and "the next audit moves it aside" in out
    assert [p.name for p in folder.iterdir()] == ["evidence.sqlite3"]
    assert (folder / "evidence.sqlite3").read_text() == "junk\n"


def test_evidence_stored_after_a_clear_during_the_audit_keeps_the_models_name(tmp_path):
    """`contamcheck cache clear` while an audit runs: its later evidence was listed by `cache info`
    under an internal id ("fake:c9d7…", "gguf:b179…"), the name having gone with the clear."""
    folder = tmp_path / "cache"
    cleared: list[str] = []

    def clear_once(label: str, done: int, total: int) -> None:
        if label == "model: scoring" and done and not cleared:
            EvidenceCache(folder).clear()
            cleared.append(label)

    config = AuditConfig(model="fake:clean", benchmark="sample", limit=40, cache=str(folder), tests=["min-k"])
    pipeline.audit(config, progress=clear_once)
    assert cleared
    assert [entry["model"] for entry in EvidenceCache.inspect(folder)["models"]] == ["fake:clean"]


def test_generations_stored_before_a_fix_changed_them_are_not_read_back(tmp_path, capsys):
    """A fix that changes what a backend generates raises requests.GENERATION_REVISION: a text
    stored under an earlier revision (here: the same keys written as before revision 2, with
    another text) is computed again, and `cache info` counts it as no longer read."""
    from importlib import resources

    from contamcheck.evidence.requests import GENERATION_PREFIX, GENERATION_REVISION, GenerateRequest

    assert GenerateRequest("p", 8).key.startswith(GENERATION_PREFIX)
    sample = resources.files("contamcheck.benchmarks").joinpath("data/sample.jsonl")
    command = [f"fake:memorise={sample}", "sample", "-n", "20", "--tests", "completion", "--json", "--cache"]
    code = main([*command, str(tmp_path)])
    fresh = json.loads(capsys.readouterr().out)
    computed = fresh["run"]["evidence"]["model"]["computed"]
    database = sqlite3.connect(tmp_path / "evidence.sqlite3", isolation_level=None)
    old = database.execute(
        "SELECT namespace, 'generate:' || substr(key, ?), value, created FROM evidence "
        "WHERE kind = 'generate'",
        (len(GENERATION_PREFIX) + 1,),
    ).fetchall()
    database.execute("DELETE FROM evidence")
    database.executemany(  # the earlier contamcheck's texts: its fault wrote other ones
        "INSERT INTO evidence VALUES (?, ?, 'generate', ?, ?)",
        [(namespace, key, b"an answer that ran on", created) for namespace, key, _, created in old],
    )
    database.close()
    assert len(old) == computed > 0 and old[0][1].startswith("generate:0:")
    assert main([*command, str(tmp_path)]) == code
    again = json.loads(capsys.readouterr().out)
    assert again["run"]["evidence"]["model"]["computed"] == computed  # none of the old read back
    assert again["tests"] == fresh["tests"] and again["verdict"] == fresh["verdict"]
    assert main(["cache", "info", "--cache", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f": {2 * computed} entries ({computed} of them texts another contamcheck version" in out
    assert "not read by this one; `contamcheck cache clear --unread` deletes those of earlier" in out
    # they go on their own: today's texts stay, and are read back; a newer version's stay too
    database = sqlite3.connect(tmp_path / "evidence.sqlite3", isolation_level=None)
    newer = GENERATION_PREFIX.replace(f"r{GENERATION_REVISION}:", f"r{GENERATION_REVISION + 10}:")
    database.execute(
        "INSERT INTO evidence VALUES (?, ?, 'generate', ?, ?)", (old[0][0], f"{newer}0:8:x", b"later", 0.0)
    )
    database.close()
    assert main(["cache", "clear", "--unread", "--cache", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert (
        f"removed {computed} texts an earlier contamcheck version generated" in out and "rest is kept" in out
    )
    assert main(["cache", "info", "--cache", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f": {computed + 1} entries (1 of them texts another contamcheck version" in out
    assert main([*command, str(tmp_path)]) == code
    assert json.loads(capsys.readouterr().out)["run"]["evidence"]["model"]["computed"] == 0
    assert main(["cache", "clear", "--unread", "--cache", str(tmp_path)]) == 0
    assert "removed 0 texts" in capsys.readouterr().out


def test_clearing_the_unread_texts_of_a_damaged_cache_keeps_it_aside(tmp_path, capsys):
    """As an audit does: the damaged file is moved aside and said, not deleted (`cache clear` is
    the command that deletes everything)."""
    (tmp_path / "evidence.sqlite3").write_bytes(b"\x13" * 5000)
    assert main(["cache", "clear", "--unread", "--cache", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert "removed 0 texts" in captured.out and "unreadable (damaged); it was moved to" in captured.err
    assert len(list(tmp_path.glob("evidence.sqlite3.damaged-*"))) == 1


def test_cache_info_says_an_evidence_file_that_is_a_folder_cant_be_opened(tmp_path, capsys):
    """It said "no evidence stored" where an audit refuses the cache (exit 2)."""
    (tmp_path / "evidence.sqlite3").mkdir()
    assert main(["cache", "info", "--cache", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "can't be opened: it is a folder, not a regular file (an audit refuses it)" in out
    assert "no evidence stored" not in out
    assert main(["fake:clean", "sample", "-n", "20", "--quick", "--cache", str(tmp_path)]) == 2


def test_a_file_whose_name_is_no_utf8_gets_a_digest(tmp_path):
    """A .gguf model at such a path stopped the audit: SQLite can't store the name's surrogates."""
    weights = tmp_path / os.fsdecode(b"m\xff.gguf")
    weights.write_bytes(b"GGUF weights")
    cache = EvidenceCache(tmp_path / "cache")
    try:
        first = cache.file_digest(weights)
        assert first == cache.file_digest(weights) == hashlib.sha256(b"GGUF weights").hexdigest()
    finally:
        cache.close()
