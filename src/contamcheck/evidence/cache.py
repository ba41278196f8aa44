"""The evidence cache: an embedded SQLite database, written one batch per transaction.

What it holds, keyed by *namespace* (a model's identity plus the settings that change its numbers)
and request key (the kind of request, its parameters and a SHA-256 of its text):

* ``evidence``: token statistics (float32 arrays) and greedy generations (UTF-8 text);
* ``models``: what the report says about a model (name, parameter count, settings), so a warm
  run needs neither the model nor its tokenizer;
* ``file_digests``: SHA-256 of weight files by (path, size, mtime), so identifying a local model
  hashes its files once.

WAL journaling with ``synchronous=NORMAL`` keeps every committed batch through a crash or
``kill -9`` of the process; a batch being written when the process dies is simply absent, and
the resumed audit computes it again. A file that is not a readable database is moved aside (never
deleted) and a fresh one started: when it is opened, or when a damaged page is met later (SQLite
finds most damage only where it reads), in which case the operation runs again on the fresh file.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sqlite3
import struct
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from ..backends.base import TokenStats
from ..errors import InputError, RuntimeFailure
from .requests import GENERATION_PREFIX, GENERATION_REVISION
from .store import Value

SCHEMA_VERSION = 1
FILE_NAME = "evidence.sqlite3"
# Beside the evidence, in the same folder: made again whenever an audit needs them.
CONVERTED_DIR = "converted"  # models dequantised from .gguf files (backends.loaders)
NULLS_DIR = "nulls"  # the bulk null's simulated reference tables (stats.bulk)
DERIVED = (CONVERTED_DIR, NULLS_DIR)
BUSY_TIMEOUT_S = 60  # how long a write waits for another process's transaction, in all
WAIT_STEP_S = 2.0  # how long one try waits: after the first, the wait is said (``on_wait``)
TAG_NAME = "CACHEDIR.TAG"
TAG_SIGNATURE = "Signature: 8a477f597d28d172789f06886806bc55"
COLUMNS = {
    "evidence": ["namespace", "key", "kind", "value", "created"],
    "models": ["namespace", "info", "updated"],
    "file_digests": ["path", "size", "mtime_ns", "sha256"],
}
_HEADER = struct.Struct("<4sBI")  # magic, flags, number of tokens
_MAGIC = b"TS01"
_HAS_MOMENTS, _TRUNCATED = 1, 2
_SELECT_CHUNK = 500  # keys per SELECT ... IN (...), well under SQLite's parameter limit
T = TypeVar("T")


def default_cache_dir() -> Path:
    """Where the cache lives unless ``--cache DIR`` says otherwise (CONTAMCHECK_CACHE overrides)."""
    override = os.environ.get("CONTAMCHECK_CACHE")
    if override:
        return Path(override).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("contamcheck"))


def cache_folder(folder: str | Path | None = None) -> Path:
    """The cache folder ``--cache`` names, or the default one. An empty name is refused: it would
    be the current folder (a CI variable left unset), and ``cache clear`` would clear it."""
    if folder is not None and not str(folder).strip():
        raise InputError(
            "--cache is empty: give the cache's folder, or leave --cache out for the default one "
            "(a variable meant to hold the folder may be unset)."
        )
    return Path(folder).expanduser() if folder is not None else default_cache_dir()


def keeps(folder: Path, path: Path) -> bool:
    """Whether ``path`` is one of the files the cache in ``folder`` keeps (its evidence file and
    SQLite's files beside it, one set aside, its tag, what is under ``converted`` or ``nulls``):
    writing a report there would replace it."""
    try:
        folder, path = folder.resolve(), path.resolve()
    except (OSError, RuntimeError):  # a loop of links: nothing of ours
        return False
    if path.parent == folder:
        return path.name == TAG_NAME or path.name.startswith(FILE_NAME)
    return any(path.is_relative_to(folder / name) for name in DERIVED)


def is_cache(folder: Path) -> bool:
    """Whether ``folder`` holds a contamcheck cache (its evidence file, one set aside, or its tag),
    so that ``cache clear`` deletes only what an audit made."""
    try:
        tag = (folder / TAG_NAME).read_text(encoding="utf-8", errors="replace")
    except OSError:
        tag = ""
    return (
        (TAG_SIGNATURE in tag and "contamcheck" in tag)
        or (folder / FILE_NAME).exists()
        or any(folder.glob(FILE_NAME + ".damaged-*"))
    )


def _tag(folder: Path) -> None:
    """Mark a folder the cache has to itself (https://bford.info/cachedir/): backup tools skip it,
    and ``cache clear`` knows it for ours."""
    with contextlib.suppress(OSError):
        tag = folder / TAG_NAME
        if not tag.exists():
            tag.write_text(
                f"{TAG_SIGNATURE}\n# This folder is the contamcheck evidence cache: everything in it is "
                "made again by an audit. `contamcheck cache clear` empties it.\n",
                encoding="utf-8",
            )


def _full(exc: sqlite3.Error) -> bool:
    """SQLite's "database or disk is full"."""
    return getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL or "is full" in str(exc)


def _busy(exc: sqlite3.Error) -> bool:
    """SQLite's "database is locked": another connection holds the write lock past a try's wait."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED) or "is locked" in str(exc)


def what_is(path: Path) -> str:
    """What stands at ``path``, where a folder should: a file, or no folder of another kind."""
    return "a file" if path.is_file() else "no folder (a device, a pipe or a socket)"


def nearest_existing(path: Path) -> Path:
    """The nearest of the folders above ``path`` (which does not exist) that does, or a file that
    stands where one of them should be (then no folder can be made there)."""
    ancestor = path.absolute().parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    return ancestor


def cache_remedy(folder: str | Path | None, audit: bool = True) -> str:
    """What to do about a cache folder that can't be used, by where its name came from."""
    if folder is None and os.environ.get("CONTAMCHECK_CACHE"):
        where = "Fix or unset CONTAMCHECK_CACHE, which names it, or pass --cache DIR"
    elif folder is not None:  # --cache was given: --no-cache goes instead of it, not beside it
        return "Pass --cache with another folder" + (", or --no-cache instead of --cache." if audit else ".")
    else:
        where = "Pass --cache DIR"
    return where + (" or --no-cache." if audit else ".")


def encode(value: Value) -> tuple[str, bytes]:
    if isinstance(value, str):
        return "generate", value.encode("utf-8", "surrogatepass")
    moments = value.mean is not None and value.std is not None
    flags = (_HAS_MOMENTS if moments else 0) | (_TRUNCATED if value.truncated else 0)
    parts = [_HEADER.pack(_MAGIC, flags, value.num_tokens), np.asarray(value.logprobs, "<f4").tobytes()]
    if moments:
        parts += [np.asarray(value.mean, "<f4").tobytes(), np.asarray(value.std, "<f4").tobytes()]
    return "score", b"".join(parts)


def decode(kind: str, blob: bytes) -> Value:
    """A stored value; ValueError (or UnicodeDecodeError) where it is damaged."""
    if not isinstance(blob, bytes):
        raise ValueError(f"a {type(blob).__name__} where bytes are stored")
    if kind == "generate":
        return blob.decode("utf-8", "surrogatepass")
    magic, flags, count = _HEADER.unpack_from(blob)
    if magic != _MAGIC:
        raise ValueError("not token statistics")
    if len(blob) != _HEADER.size + 4 * count * (3 if flags & _HAS_MOMENTS else 1):
        raise ValueError("token statistics cut short or run long")
    arrays = np.frombuffer(blob, dtype="<f4", offset=_HEADER.size).astype(np.float32)
    logprobs = arrays[:count]
    mean = arrays[count : 2 * count] if flags & _HAS_MOMENTS else None
    std = arrays[2 * count : 3 * count] if flags & _HAS_MOMENTS else None
    return TokenStats(logprobs, mean, std, truncated=bool(flags & _TRUNCATED))


class EvidenceCache:
    """A SQLite evidence store in ``folder`` (created if missing)."""

    def __init__(
        self,
        folder: str | Path | None = None,
        audit: bool = True,
        on_wait: Callable[[bool | None], None] | None = None,
    ) -> None:
        """``audit``: opened by an audit, which can do without it (``--no-cache``); not by ``cache info``.

        ``on_wait(True)`` hears that a write waits for another process's transaction, at each try
        after the first; then ``on_wait(False)`` once it went through, or ``on_wait(None)`` when it
        gave up after ``BUSY_TIMEOUT_S`` (a RuntimeFailure follows)."""
        self.folder = cache_folder(folder)
        self.on_wait = on_wait
        remedy = cache_remedy(folder, audit)
        self.check(folder, audit)  # a file in the way, a folder that can't be written
        try:
            # only a folder the cache has to itself is tagged: `--cache .` must not make backup
            # tools skip a project, nor `cache clear` take its converted/ for ours
            own = not self.folder.exists() or not any(self.folder.iterdir())
        except OSError:
            own = False
        own = own or (folder is None and not os.environ.get("CONTAMCHECK_CACHE"))  # the user cache folder
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(
                f"Can't create the cache folder {str(self.folder)!r}: {exc.strerror}. {remedy}"
            ) from None
        self.path = self.folder / FILE_NAME
        self.notes: list[str] = []
        self.set_aside: list[Path] = []  # damaged files moved aside by this cache
        if self.path.exists() and not os.access(self.path, os.W_OK):
            raise InputError(
                f"The evidence cache {str(self.path)!r} is read-only. Make it writable. {remedy}"
            )
        try:
            self._db = self._waiting(self._open)
        except sqlite3.OperationalError as exc:  # locked past the timeout, or a read-only folder: intact
            if _busy(exc):
                raise self._locked() from None
            raise InputError(
                f"The evidence cache {str(self.path)!r} can't be used ({exc}). {remedy}"
            ) from None
        except sqlite3.DatabaseError as exc:  # not a database, or another schema: set aside
            self._set_aside(exc)
            self._db = self._waiting(self._open)
        if audit and own:
            _tag(self.folder)

    @staticmethod
    def check(folder: str | Path | None = None, audit: bool = True) -> None:
        """Raise InputError where the cache folder ``folder`` is a file or could not be made or
        written, creating nothing (a damaged or locked database is found when it is opened).

        An audit asks before it reads its inputs, so a cache it could not keep stops it at once."""
        path = cache_folder(folder)
        remedy = cache_remedy(folder, audit)
        try:
            EvidenceCache._check(path, remedy)
        except OSError as exc:  # a folder on the way that can't be entered
            raise InputError(
                f"The cache folder {str(path)!r} can't be used: {exc.strerror}. {remedy}"
            ) from None

    @staticmethod
    def _check(path: Path, remedy: str) -> None:
        if path.is_symlink() and not path.exists():
            raise InputError(f"The cache folder {str(path)!r} is a broken link. {remedy}")
        if path.exists():
            if not path.is_dir():
                raise InputError(f"The cache folder {str(path)!r} is {what_is(path)}. {remedy}")
            if not os.access(path, os.W_OK):
                raise InputError(f"The cache folder {str(path)!r} is not writable. {remedy}")
            return
        ancestor = nearest_existing(path)
        if not ancestor.is_dir():
            raise InputError(
                f"Can't create the cache folder {str(path)!r}: {str(ancestor)!r} is {what_is(ancestor)}. "
                f"{remedy}"
            )
        if not os.access(ancestor, os.W_OK):
            raise InputError(
                f"Can't create the cache folder {str(path)!r}: {str(ancestor)!r} is not writable. {remedy}"
            )

    def _set_aside(self, exc: sqlite3.DatabaseError) -> None:
        aside = self.path.with_name(f"{FILE_NAME}.damaged-{time.time_ns()}")
        self.path.rename(aside)
        for suffix in ("-wal", "-shm"):  # the damaged file's: a fresh file must not replay them
            Path(str(self.path) + suffix).unlink(missing_ok=True)
        self.set_aside.append(aside)
        self.notes.append(
            f"The evidence cache was unreadable ({exc}); moved it to {aside} and started a new one."
        )

    def _safely(self, action: Callable[[], T]) -> T:
        """Run ``action``; if it meets a damaged page, set the file aside and run it on a fresh one.

        Only damage counts (SQLite's "malformed", "not a database": a plain ``DatabaseError``); a
        misuse (a closed connection, a constraint) is a bug to raise, not a reason to drop the cache.
        Another process sharing the cache may have set the file aside first: then the file at the
        path is already a fresh one, and is opened, not moved.
        """
        try:
            try:
                return self._waiting(action)
            except sqlite3.DatabaseError as exc:
                if type(exc) is not sqlite3.DatabaseError:  # locked, full, a misuse: not damage
                    raise
                with contextlib.suppress(sqlite3.Error):
                    self._db.close()
                if self._same_file():
                    self._set_aside(exc)
                self._db = self._waiting(self._open)
                return self._waiting(action)
        except sqlite3.OperationalError as exc:
            if _busy(exc):
                raise self._locked() from None
            if not _full(exc):
                raise
            raise RuntimeFailure(
                f"The cache folder {str(self.folder)!r} is full ({exc}). Free space on its disk, or "
                "pass --cache with a folder on another one. What was stored before is kept; the same "
                "command resumes."
            ) from None

    def _locked(self) -> RuntimeFailure:
        return RuntimeFailure(
            f"The evidence cache {str(self.path)!r} stayed locked by another process for "
            f"{BUSY_TIMEOUT_S} s (an audit stopped with Ctrl-Z, or a program holding it open). What "
            "was stored before is kept: run the same command again once that process ends or goes "
            "on, or pass --cache with another folder."
        )

    def _waiting(self, action: Callable[[], T]) -> T:
        """Run ``action``, trying again while another process holds the write lock, up to
        ``BUSY_TIMEOUT_S`` in all; each try waits ``WAIT_STEP_S``, and each one after the first is
        said to ``on_wait``, so that a long wait is not silence. An action is one transaction, or
        reads: trying it again repeats nothing."""
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        waited = False
        while True:
            tried = time.monotonic()
            try:
                result = action()
            except sqlite3.OperationalError as exc:
                if not _busy(exc):
                    raise
                if time.monotonic() >= deadline:
                    if waited and self.on_wait is not None:
                        self.on_wait(None)
                    raise
                if self.on_wait is not None:
                    self.on_wait(True)  # each try: a cancel (the web UI's progress raises) is heard
                waited = True
                # SQLite answers some locks at once (a snapshot out of date): no spinning on them
                time.sleep(max(0.0, 0.1 - (time.monotonic() - tried)))
                continue
            if waited and self.on_wait is not None:
                self.on_wait(False)
            return result

    def _same_file(self) -> bool:
        """Is the file at the path still the one this cache opened?"""
        try:
            stat = self.path.stat()
        except OSError:
            return False
        return (stat.st_dev, stat.st_ino) == self._file

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=WAIT_STEP_S, isolation_level=None, check_same_thread=False)
        try:
            return self._prepare(db)
        except BaseException:  # tried again when locked: no connection left open per try
            db.close()
            raise

    def _prepare(self, db: sqlite3.Connection) -> sqlite3.Connection:
        stat = self.path.stat()
        self._file = (stat.st_dev, stat.st_ino)
        version = db.execute("PRAGMA user_version").fetchone()[0]  # read before anything is written
        if version > SCHEMA_VERSION:  # a newer contamcheck's: not damage, and not to be moved aside
            raise InputError(
                f"The evidence cache {str(self.path)!r} was written by a newer contamcheck (cache "
                f"schema {version}; this one uses {SCHEMA_VERSION}): nothing in it was changed. "
                "Upgrade contamcheck, or pass --cache with another folder."
            )
        if version not in (0, SCHEMA_VERSION):
            raise sqlite3.DatabaseError(f"cache schema {version}, this contamcheck uses {SCHEMA_VERSION}")
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.executescript(
            """
            CREATE TABLE IF NOT EXISTS evidence (
                namespace TEXT NOT NULL, key TEXT NOT NULL, kind TEXT NOT NULL, value BLOB NOT NULL,
                created REAL NOT NULL, PRIMARY KEY (namespace, key)) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS models (
                namespace TEXT PRIMARY KEY, info TEXT NOT NULL, updated REAL NOT NULL);
            CREATE TABLE IF NOT EXISTS file_digests (
                path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
                sha256 TEXT NOT NULL);
            """
        )
        for table, columns in COLUMNS.items():
            found = [row[1] for row in db.execute(f"PRAGMA table_info({table})")]
            if found != columns:  # a database of another kind, under our name: set aside
                raise sqlite3.DatabaseError(f"its table {table} has the columns {found}, not {columns}")
        if version != SCHEMA_VERSION:  # a new file; written only then, as it waits for any writer
            db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        return db

    # -- evidence ---------------------------------------------------------------------------------

    def get_many(self, namespace: str, keys: Iterable[str]) -> dict[str, Value]:
        keys = list(keys)
        return self._safely(lambda: self._get_many(namespace, keys))

    def _get_many(self, namespace: str, keys: list[str]) -> dict[str, Value]:
        found: dict[str, Value] = {}
        damaged: list[tuple[str, str, object]] = []
        for start in range(0, len(keys), _SELECT_CHUNK):
            chunk = keys[start : start + _SELECT_CHUNK]
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(
                f"SELECT key, kind, value FROM evidence WHERE namespace = ? AND key IN ({marks})",
                [namespace, *chunk],
            )
            for key, kind, blob in rows:
                try:
                    found[key] = decode(kind, blob)
                except (ValueError, struct.error):  # UnicodeDecodeError is a ValueError
                    damaged.append((namespace, key, blob))
        if damaged:  # computed again: stored values are never replaced (first write wins)
            with self._transaction():  # only if unchanged: another audit may have stored it since
                self._db.executemany(
                    "DELETE FROM evidence WHERE namespace = ? AND key = ? AND value = ?", damaged
                )
            self.notes.append(
                f"{len(damaged)} damaged entr{'y' if len(damaged) == 1 else 'ies'} of the evidence "
                "cache removed and computed again."
            )
        return found

    def put_many(self, namespace: str, entries: Mapping[str, Value]) -> None:
        now = time.time()
        rows = [(namespace, key, *encode(value), now) for key, value in entries.items()]

        def put() -> None:
            with self._transaction():
                self._db.executemany(
                    # first write wins (engine.py): a value another process stored meanwhile stays
                    "INSERT OR IGNORE INTO evidence (namespace, key, kind, value, created) "
                    "VALUES (?, ?, ?, ?, ?)",
                    rows,
                )

        self._safely(put)

    # -- models and files ---------------------------------------------------------------------------

    def get_model_info(self, namespace: str) -> dict[str, Any] | None:
        return self._safely(lambda: self._model_info(namespace))

    def _model_info(self, namespace: str) -> dict[str, Any] | None:
        row = self._db.execute("SELECT info FROM models WHERE namespace = ?", (namespace,)).fetchone()
        return json.loads(row[0]) if row else None

    def put_model_info(self, namespace: str, info: dict[str, Any]) -> None:
        def put() -> None:
            with self._transaction():
                self._db.execute(
                    "INSERT OR REPLACE INTO models (namespace, info, updated) VALUES (?, ?, ?)",
                    (namespace, json.dumps(info, sort_keys=True), time.time()),
                )

        self._safely(put)

    def file_digest(self, path: Path) -> str:
        """SHA-256 of a file, computed once per (path, size, modification time)."""
        # a name that is no UTF-8 keeps its bytes as lone surrogates, which SQLite can't store: as
        # backslash escapes, one text per name still
        resolved = os.fsencode(path.resolve()).decode("utf-8", "backslashreplace")
        stat = path.stat()
        key = (resolved, stat.st_size, stat.st_mtime_ns)
        query = "SELECT sha256 FROM file_digests WHERE path = ? AND size = ? AND mtime_ns = ?"
        row = self._safely(lambda: self._db.execute(query, key).fetchone())
        if row:
            return str(row[0])
        digest = sha256_file(path)  # outside the retried part: a weight file can take minutes

        def put() -> None:
            with self._transaction():
                self._db.execute(
                    "INSERT OR REPLACE INTO file_digests (path, size, mtime_ns, sha256) VALUES (?, ?, ?, ?)",
                    (*key, digest),
                )

        self._safely(put)
        return digest

    # -- maintenance ----------------------------------------------------------------------------------

    def summary(self) -> dict[str, Any]:
        """What the cache folder holds: evidence entries per model, and each part's size in bytes."""
        return self._safely(self._summary)

    def _summary(self) -> dict[str, Any]:
        return _summarise(self._db, self.folder)

    @staticmethod
    def inspect(folder: str | Path | None = None) -> dict[str, Any]:
        """:meth:`summary` of the cache in ``folder``, read only: nothing is moved or written
        (``cache info`` on a shared, read-only or damaged cache). A closed cache is read as an
        immutable file, which creates nothing; one with a write-ahead log (an audit running, or one
        cut off) read-only, which reads the log too (SQLite may add its index file beside it), and
        where that can't be opened (a folder that can't be written) as immutable, with a note in
        ``"stale"`` that the log's entries are not counted. A file that is no cache of ours is said
        in ``"unreadable"`` (an audit sets it aside and starts anew), one that can't be opened (its
        permissions) in ``"unopened"``; both with no models."""
        where = cache_folder(folder)
        if where.exists() and not where.is_dir():
            raise InputError(
                f"The cache folder {str(where)!r} is {what_is(where)}. {cache_remedy(folder, False)}"
            )
        path = where / FILE_NAME
        if path.exists() and not path.is_file():  # a folder of that name: an audit can't open it
            kind = "a folder" if path.is_dir() else "a special file (a pipe, a socket, a device)"
            return {**_summarise(None, where), "not_a_file": kind}
        if not path.is_file():
            return _summarise(None, where)
        uri = path.absolute().as_uri()
        log = Path(f"{path}-wal")
        logged = log.is_file() and log.stat().st_size > 0
        notes: dict[str, str] = {}
        db: sqlite3.Connection | None = None
        try:
            try:
                db = sqlite3.connect(
                    f"{uri}?{'mode=ro' if logged else 'immutable=1'}", uri=True, timeout=BUSY_TIMEOUT_S
                )
                db.execute("SELECT 1 FROM sqlite_master").fetchone()
            except sqlite3.OperationalError as exc:
                if db is not None:
                    db.close()
                    db = None
                if not logged or "unable to open" not in str(exc):
                    raise
                db = sqlite3.connect(f"{uri}?immutable=1", uri=True)
                notes["stale"] = (
                    "the entries of the audit that is running, or was cut off, are not counted (its "
                    "write-ahead log can't be read from a folder this user can't write)"
                )
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                notes["newer"] = f"cache schema {version}; this contamcheck uses {SCHEMA_VERSION}"
                return {**_summarise(None, where), **notes}
            if version not in (0, SCHEMA_VERSION):
                raise sqlite3.DatabaseError(f"cache schema {version}, this contamcheck uses {SCHEMA_VERSION}")
            return {**_summarise(db, where), **notes}
        except sqlite3.OperationalError as exc:  # locked past the timeout, or not ours to open
            return {**_summarise(None, where), "unopened": str(exc)}
        except sqlite3.DatabaseError as exc:  # not a database, or another schema
            return {**_summarise(None, where), "unreadable": str(exc)}
        finally:
            if db is not None:
                db.close()

    def clear(self) -> dict[str, int]:
        """Delete everything the folder holds: the evidence entries, and the other files and their bytes.

        Besides evidence: models converted from .gguf files and the simulated null tables, both made
        again when an audit needs them, and evidence files once moved aside as unreadable.
        """
        return self._safely(self._clear)

    def _clear(self) -> dict[str, int]:
        # counted first for a disk too full to write even the deletion (the files then go whole)
        removed = int(self._db.execute("SELECT COUNT(*) FROM evidence").fetchone()[0])
        try:
            # each step tried again on its own: VACUUM waiting for a lock must not run the
            # deletion again (it would count the entries it deleted as none)
            removed = self._waiting(self._delete_everything)
            self._waiting(lambda: self._db.execute("VACUUM"))
        except sqlite3.OperationalError as exc:
            if not _full(exc):
                raise
            # no room to write even a deletion: the files go whole (an audit using them loses
            # what it stores next, as with any clear), and a fresh one starts
            self._db.close()
            for suffix in ("", "-wal", "-shm"):
                Path(f"{self.path}{suffix}").unlink(missing_ok=True)
            self._db = self._waiting(self._open)
        parts = [self.folder / name for name in DERIVED if (self.folder / name).is_dir()]
        parts += list(self.folder.glob(FILE_NAME + ".damaged-*"))
        before = [(_count(part) if part.is_dir() else 1, tree_size(part)) for part in parts]
        for part in parts:  # what can't be removed (a file in use) stays, and is not counted
            if part.is_dir():
                shutil.rmtree(part, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    part.unlink()
        after = [(_count(part) if part.is_dir() else int(part.exists()), tree_size(part)) for part in parts]
        files = sum(b[0] - a[0] for b, a in zip(before, after, strict=True))
        freed = sum(b[1] - a[1] for b, a in zip(before, after, strict=True))
        return {"entries": removed, "files": files, "bytes": freed}

    def clear_unread(self) -> int:
        """Delete the generations this version does not read back because an earlier one stored
        them (under an earlier ``requests.GENERATION_REVISION``, or before there was one), keeping
        the rest, a newer version's texts too (it may share the cache); how many went. Their space
        is kept for what is stored next (no VACUUM: rewriting a large file for small texts is not
        worth it)."""
        return self._safely(self._delete_unread)

    def _delete_unread(self) -> int:
        with self._transaction():
            cursor = self._db.execute(
                # "generate:r3:1:…": the revision between "generate:r" and the next colon
                "DELETE FROM evidence WHERE kind = 'generate' AND (substr(key, 1, 10) != 'generate:r' "
                "OR CAST(substr(key, 11, instr(substr(key, 11), ':') - 1) AS INTEGER) < ?)",
                (GENERATION_REVISION,),
            )
        return int(cursor.rowcount)

    def _delete_everything(self) -> int:
        """Delete every entry, model and digest in one transaction; how many entries there were."""
        with self._transaction():
            removed = int(self._db.execute("SELECT COUNT(*) FROM evidence").fetchone()[0])
            self._db.execute("DELETE FROM evidence")
            self._db.execute("DELETE FROM models")
            self._db.execute("DELETE FROM file_digests")
        return removed

    def close(self) -> None:
        self._db.close()

    def _transaction(self) -> _Transaction:
        return _Transaction(self._db)


class _Transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: type[BaseException] | None, *rest: object) -> None:
        if kind is None:
            self.db.execute("COMMIT")
        elif self.db.in_transaction:  # SQLite has rolled back already on some errors (a full disk)
            self.db.execute("ROLLBACK")


def _summarise(db: sqlite3.Connection | None, folder: Path) -> dict[str, Any]:
    """Evidence entries per model in ``db`` (none without one) and the bytes of each part of ``folder``."""
    rows = (
        db.execute(
            "SELECT e.namespace, COUNT(*), MIN(e.created), MAX(e.created), m.info, "
            "SUM(e.kind = 'generate' AND substr(e.key, 1, ?) != ?) FROM evidence e "
            "LEFT JOIN models m ON m.namespace = e.namespace "
            "GROUP BY e.namespace ORDER BY MAX(e.created) DESC",
            (len(GENERATION_PREFIX), GENERATION_PREFIX),
        ).fetchall()
        if db is not None and _has_table(db, "evidence") and _has_table(db, "models")
        else []
    )
    per_model = []
    for namespace, count, first, last, info, unread in rows:
        stored = json.loads(info) if info else {}
        name = stored.get("name", namespace.split("|")[0])
        names = [other for other in stored.get("names", []) if other != name]
        per_model.append(
            {
                "model": name,  # the name it was last audited under
                "also": names,  # others that reached the same evidence (another address, a copy)
                "namespace": namespace,
                "entries": count,
                # generations stored before a fix changed them (requests.GENERATION_REVISION)
                "unread": int(unread or 0),
                "first": first,
                "last": last,
            }
        )
    size = sum(p.stat().st_size for p in folder.glob(FILE_NAME + "*") if p.is_file())
    derived = {name: {"bytes": tree_size(folder / name), "count": _count(folder / name)} for name in DERIVED}
    return {"path": str(folder / FILE_NAME), "bytes": size, "models": per_model, **derived}


def _has_table(db: sqlite3.Connection, name: str) -> bool:
    return (
        db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone()
        is not None
    )


def tree_size(path: Path) -> int:
    """Bytes of the files under ``path`` (0 when it does not exist)."""
    if not path.exists():
        return 0
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def _count(path: Path) -> int:
    """Entries of a folder, less those being made (hidden: a conversion's ``.staging-*``)."""
    return sum(1 for part in path.iterdir() if not part.name.startswith(".")) if path.is_dir() else 0


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(4 * 2**20), b""):
            digest.update(block)
    return digest.hexdigest()
