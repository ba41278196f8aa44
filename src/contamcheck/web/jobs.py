"""Audits as jobs: stored under the data folder, run one at a time by a worker thread.

Layout of the data folder (every file written atomically)::

    jobs/<id>/job.json      the job: its config, status, timestamps, stages, verdict summary
    jobs/<id>/report.json   the report (``to_json``), once the audit finished
    uploads/<random>/<name> uploaded question files (the name is the upload's, reduced to [A-Za-z0-9._-])

A job id is ``YYYYMMDD-HHMMSS-<8 hex>`` (sortable, checked by :data:`JOB_ID` before any path is
built from it). A job found "running" or "queued" when the server starts was cut off by a stop or a
crash: it is shown as interrupted and can be run again, resuming from the evidence cache.
"""

from __future__ import annotations

import logging
import os
import re
import secrets
import shutil
import socket
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..config import AuditConfig
from ..errors import ContamcheckError, InputError, ReportUnreadable
from ..evidence.engine import ANALYSIS, FAILED
from ..pipeline import TWINS
from ..report.io import first_error, write_atomic
from ..report.terminal import reference_line

if TYPE_CHECKING:
    from ..report.model import Report

log = logging.getLogger("contamcheck.web")

JOB_ID = re.compile(r"^[0-9]{8}-[0-9]{6}-[0-9a-f]{8}$")
UPLOAD_NAME = re.compile(r"^[0-9a-f]{32}/[A-Za-z0-9][A-Za-z0-9._-]{0,100}$")
Status = Literal["queued", "running", "done", "failed", "cancelled", "interrupted"]
FINISHED: frozenset[str] = frozenset({"done", "failed", "cancelled", "interrupted"})
JOB_SCHEMA = 1
LOCK_NAME = "serve.lock"  # held by the server using the folder

AuditFunction = Callable[[AuditConfig, Callable[[str, int, int], None]], "Report"]


def _moment(stamp: str) -> datetime:
    """A stored time to sort by; one edited by hand (no zone, not a time) sorts as UTC, or first."""
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return datetime.min.replace(tzinfo=timezone.utc)
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


def now(timespec: str = "seconds") -> str:
    return datetime.now(timezone.utc).isoformat(timespec=timespec)


class Stage(BaseModel):
    """One progress bar: a label from the pipeline's progress callback, done of total (0: unknown;
    -1, ``evidence.engine.FAILED``: the step failed, e.g. a model that could not load)."""

    label: str
    done: int = 0
    total: int = 0
    seconds: float = 0.0  # since the stage started


# What the form sets (forms.build_config); anything else in a stored config (edited by hand) is
# left at its default when the audit runs again: the web UI uses the default evidence cache, device,
# and never a repository's own code.
FORM_SETTINGS = frozenset(
    {
        "model", "benchmark", "field", "limit", "seed", "control", "control_field", "reference",
        "tests", "quick", "twinless", "k", "alpha", "permutations", "twins", "threads", "ordered",
    }
)  # fmt: skip


class JobRecord(BaseModel):
    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)

    schema_version: int = JOB_SCHEMA
    id: str
    status: Status = "queued"
    created_at: str
    started_at: str | None = None
    finished_at: str | None = None
    config: dict[str, Any]
    benchmark_label: str = Field(description="the built-in name, the typed spec, or the uploaded file's name")
    control_label: str | None = None
    uploads: list[str] = Field(default_factory=list, description="files under uploads/ this job reads")
    message: str | None = None  # why it failed, was cancelled or interrupted
    rerun_of: str | None = None
    stages: list[Stage] = Field(default_factory=list)
    verdict_code: str | None = None
    verdict_label: str | None = None
    index_value: float | None = None
    index_band: str | None = None
    reference_label: str | None = Field(
        default=None, description="what the reference became (auto: a model, or none and why), once done"
    )
    report_problem: str | None = Field(
        default=None,
        description="why a finished audit's report.json can't be shown (read back, never stored)",
        exclude=True,
    )

    @property
    def finished(self) -> bool:
        return self.status in FINISHED

    def audit_config(self) -> AuditConfig:
        """The stored config, validated again, with only what the form sets: the web UI never runs a
        repository's own code, and keeps its evidence in the default cache."""
        return AuditConfig(**{k: v for k, v in self.config.items() if k in FORM_SETTINGS})

    def as_uploaded(self, message: str) -> str:
        """A message that names an uploaded file by where the server keeps it, naming it as uploaded."""
        for key, label in (("benchmark", self.benchmark_label), ("control", self.control_label)):
            stored = self.config.get(key)
            if label and isinstance(stored, str) and any(stored.endswith("/" + u) for u in self.uploads):
                message = renamed(message, stored, label)
        return message


def renamed(message: str, stored: str, name: str) -> str:
    """``message`` naming a stored upload ``stored`` by ``name``, the name it was uploaded under."""
    return message.replace(repr(stored), repr(name)).replace(stored, name)


class JobStore:
    """The jobs of one data folder, in memory and on disk; safe to use from several threads."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.jobs_dir = root / "jobs"
        self.uploads_dir = root / "uploads"
        self.jobs_dir.mkdir(parents=True, exist_ok=True)
        self.uploads_dir.mkdir(parents=True, exist_ok=True)
        self._held = _hold(root)  # before loading: loading marks the audits it finds running as cut off
        if self._held is not None:  # let go with the store too, where no lifespan closes it
            weakref.finalize(self, self._held.close)
        self._lock = threading.RLock()
        self._jobs: dict[str, JobRecord] = {}
        self._stage_clock: dict[tuple[str, str], float] = {}
        # a done job's verdict as its report says, by the report file's identity (inode, time, size)
        self._read_back: dict[str, tuple[tuple[int, int, int] | None, dict[str, Any]]] = {}
        try:
            self._load()
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Let another server use the data folder (the lock goes with the process too)."""
        if self._held is not None:
            self._held.close()
            self._held = None

    def _load(self) -> None:
        for folder in sorted(self.jobs_dir.iterdir()):
            path = folder / "job.json"
            if not JOB_ID.match(folder.name) or not path.is_file():
                continue
            try:
                record = JobRecord.model_validate_json(path.read_text(encoding="utf-8"))
            except ValidationError as exc:
                log.warning("skipping unreadable job %s: %s", folder.name, first_error(exc))
                continue
            except (OSError, ValueError) as exc:
                log.warning("skipping unreadable job %s: %s", folder.name, exc)
                continue
            if record.id != folder.name:
                continue
            try:
                record.audit_config()
            except (ContamcheckError, TypeError) as exc:  # edited by hand, or from another version
                log.warning("skipping job %s: its settings are not valid here: %s", folder.name, exc)
                continue
            if record.status in ("queued", "running"):
                was = "running" if record.status == "running" else "waiting in the queue"
                record.status = "interrupted"
                record.message = (
                    f"The server stopped while this audit was {was}. Evidence computed so far is kept "
                    "in the cache: run it again to resume."
                )
                record.finished_at = record.finished_at or now()
                self._save(record)
            self._jobs[record.id] = record

    # Reading.

    def get(self, job_id: str) -> JobRecord | None:
        if not JOB_ID.match(job_id):
            return None
        with self._lock:
            record = self._jobs.get(job_id)
            copy = record.model_copy(deep=True) if record is not None else None
        return self._as_reported(copy) if copy is not None else None  # a report is read unlocked

    def all(self) -> list[JobRecord]:
        with self._lock:
            records = [r.model_copy(deep=True) for r in self._jobs.values()]
        records = [self._as_reported(r) for r in records]
        # newest first: to the microsecond, so audits created within one second keep their order
        return sorted(records, key=lambda r: (_moment(r.created_at), r.id), reverse=True)

    def report_identity(self, job_id: str) -> tuple[int, int, int] | None:
        """The report file as it is now (inode, modification time, size): what was read from it
        before holds while this is the same. None when there is none."""
        try:
            stat = (self.jobs_dir / job_id / "report.json").stat()
        except OSError:
            return None
        return (stat.st_ino, stat.st_mtime_ns, stat.st_size)

    def _as_reported(self, record: JobRecord) -> JobRecord:
        """The job (a copy); a finished one with the verdict its report gives, read back and checked
        as ``contamcheck report`` reads it (job.json only summarises it, and is not checked), or
        with why the report can't be shown. Read again only when the file changed."""
        if record.status != "done":
            return record
        identity = self.report_identity(record.id)
        known = self._read_back.get(record.id)
        if known is None or known[0] != identity:
            path = self.jobs_dir / record.id / "report.json"
            known = (identity, self._read_report_back(record, path if identity else None))
            self._read_back[record.id] = known
        return record.model_copy(update=known[1])

    def _read_report_back(self, record: JobRecord, path: Path | None) -> dict[str, Any]:
        from ..report.io import read_report

        unknown = {"verdict_code": None, "verdict_label": None, "index_value": None, "index_band": None}
        if path is None:
            return {**unknown, "report_problem": "Its report (report.json) is gone from the data folder."}
        try:
            report = read_report(path)
        except ContamcheckError as exc:
            return {**unknown, "report_problem": str(exc)}
        model = record.config.get("model")
        if report.model.spec != model:
            return {
                **unknown,
                "report_problem": f"Its report.json is another audit's (of {report.model.spec!r}, not "
                f"{model!r}): it was replaced after the audit.",
            }
        return {
            "verdict_code": report.verdict.code,
            "verdict_label": report.verdict.label,
            "index_value": report.index.value,
            "index_band": report.index.band,
            "reference_label": reference_line(report),
            "report_problem": None,
        }

    def report_path(self, job_id: str) -> Path | None:
        """The saved report of a finished job, looked up by its (checked) id."""
        with self._lock:
            record = self._jobs.get(job_id) if JOB_ID.match(job_id) else None
        if record is None or record.status != "done":
            return None
        path = self.jobs_dir / record.id / "report.json"
        return path if path.is_file() else None

    def read_report(self, job_id: str) -> Report | None:
        """A finished job's report, checked; ReportUnreadable where it can't be read, or is another
        audit's (replaced after this one finished)."""
        from ..report.io import read_report

        path = self.report_path(job_id)
        if path is None:
            return None
        record = self.get(job_id)
        if record is not None and record.report_problem is not None:
            raise ReportUnreadable(record.report_problem)
        return read_report(path)

    # Writing.

    def create(
        self,
        config: AuditConfig,
        benchmark_label: str,
        control_label: str | None = None,
        uploads: list[str] | None = None,
        rerun_of: str | None = None,
    ) -> JobRecord:
        stored = asdict(config)
        stored["trust_remote_code"] = False
        with self._lock:
            job_id = f"{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}-{secrets.token_hex(4)}"
            record = JobRecord(
                id=job_id,
                created_at=now("microseconds"),
                config=stored,
                benchmark_label=benchmark_label,
                control_label=control_label,
                uploads=list(uploads or []),
                rerun_of=rerun_of,
            )
            (self.jobs_dir / job_id).mkdir()
            self._jobs[job_id] = record
            self._save(record)
            return record.model_copy(deep=True)

    def update(self, job_id: str, **changes: Any) -> JobRecord:
        with self._lock:
            record = self._jobs[job_id].model_copy(update=changes)
            self._jobs[job_id] = record
            self._save(record)
            return record.model_copy(deep=True)

    def progress(self, job_id: str, label: str, done: int, total: int) -> None:
        """Record a progress call in memory (saved with the job's next status change)."""
        with self._lock:
            record = self._jobs[job_id]
            known = next((s for s in record.stages if s.label == label), None)
            if known is not None and known.total == FAILED and total != FAILED:
                self._stage_clock.pop((job_id, label), None)  # a failed step starting again: a new clock
            elif known is not None and 0 < known.total <= known.done and done == 0 and total != FAILED:
                # a finished step starting again (a second wait for the cache): its seconds add up,
                # without the time between (after a failed one, a new clock, as above)
                self._stage_clock[(job_id, label)] = time.monotonic() - known.seconds
            started = self._stage_clock.setdefault((job_id, label), time.monotonic())
            seconds = round(time.monotonic() - started, 1)
            if known is not None:
                known.done, known.total, known.seconds = done, total, seconds
                return
            stage = Stage(label=label, done=done, total=total, seconds=seconds)
            # A stage that starts while the last one has done nothing yet is what it waits for
            # (the model loads at the first batch that isn't cached): list it first.
            last = record.stages[-1] if record.stages else None
            if last is not None and last.done == 0 and last.total > 0:
                record.stages.insert(len(record.stages) - 1, stage)
            else:
                record.stages.append(stage)

    def save_report(self, job_id: str, report: Report) -> None:
        from ..report.io import to_json

        write_atomic(self.jobs_dir / job_id / "report.json", to_json(report))

    def delete(self, job_id: str) -> bool:
        with self._lock:
            record = self._jobs.pop(job_id, None)
            self._read_back.pop(job_id, None)
            if record is None:
                return False
            shutil.rmtree(self.jobs_dir / record.id, ignore_errors=True)
            still_used = {u for r in self._jobs.values() for u in r.uploads}
            for upload in record.uploads:
                if upload not in still_used and UPLOAD_NAME.match(upload):
                    shutil.rmtree(self.uploads_dir / upload.split("/")[0], ignore_errors=True)
            return True

    def save_upload(self, data: bytes, stem: str, suffix: str) -> tuple[Path, str]:
        """Store an upload under a random folder; returns its path and its name under uploads/."""
        folder = secrets.token_hex(16)
        name = f"{folder}/{stem}{suffix}"
        if not UPLOAD_NAME.match(name):
            raise ValueError(f"unsafe upload name {name!r}")
        (self.uploads_dir / folder).mkdir()
        path = self.uploads_dir / name
        path.write_bytes(data)
        return path, name

    def remove_upload(self, name: str) -> None:
        if UPLOAD_NAME.match(name):
            shutil.rmtree(self.uploads_dir / name.split("/")[0], ignore_errors=True)

    def _save(self, record: JobRecord) -> None:
        write_atomic(self.jobs_dir / record.id / "job.json", record.model_dump_json(indent=2) + "\n")


def _hold(root: Path) -> IO[str] | None:
    """An exclusive lock on the data folder, held while the server runs: a second server on the
    same folder would mark the first one's running audits interrupted, and could delete them. None
    where the system has no ``flock`` (Windows)."""
    try:
        import fcntl
    except ImportError:
        return None
    handle = open(root / LOCK_NAME, "a+", encoding="utf-8")  # noqa: SIM115 (held until close)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.seek(0)
        holder = handle.read().strip()[:200] or "another process"
        handle.close()
        raise InputError(
            f"Another contamcheck serve uses the data folder {str(root)!r} ({holder}): two servers "
            "would each take the other's running audits for cut off. Stop it, or pass --data with "
            "another folder."
        ) from None
    handle.seek(0)
    handle.truncate()
    handle.write(f"process {os.getpid()} on {socket.gethostname()}\n")
    handle.flush()
    return handle


class _JobStopped(Exception):
    """Raised from the progress callback to stop an audit at its next batch (private)."""

    def __init__(self, why: Literal["cancelled", "shutdown"]) -> None:
        super().__init__(why)
        self.why = why


def run_pipeline(config: AuditConfig, progress: Callable[[str, int, int], None]) -> Report:
    from .. import pipeline  # looked up at call time, so tests can stand in for it

    return pipeline.audit(config, progress=progress)


class JobRunner:
    """One worker thread: runs queued jobs in order, one at a time; cancels at the next batch."""

    def __init__(self, store: JobStore, audit: AuditFunction | None = None) -> None:
        self.store = store
        self.audit = audit or run_pipeline
        self._queue: deque[str] = deque()
        self._condition = threading.Condition()
        self._cancelled: set[str] = set()
        self._current: str | None = None
        self._stopping = False
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="contamcheck-audits", daemon=True)
        self._thread.start()

    def running(self) -> bool:
        """Whether the worker thread is still alive (after ``stop``: an audit did not stop in time)."""
        return self._thread is not None and self._thread.is_alive()

    def stop(self, timeout: float = 30.0) -> None:
        """Stop after the running audit's current batch; what is queued is marked interrupted."""
        with self._condition:
            self._stopping = True
            waiting = list(self._queue)
            self._queue.clear()
            self._condition.notify_all()
        for job_id in waiting:
            self.store.update(
                job_id,
                status="interrupted",
                finished_at=now(),
                message="The server stopped before this audit started. Run it again.",
            )
        if self._thread is not None:
            self._thread.join(timeout)
        current = self._current
        record = self.store.get(current) if current is not None else None
        if self.running() and record is not None and record.status == "running":  # serve() exits without it
            self.store.update(
                record.id,
                status="interrupted",
                finished_at=now(),
                message="The server stopped during this audit, before its current step ended. Evidence "
                "computed so far is kept in the cache: run it again to resume.",
            )

    def submit(self, job_id: str) -> None:
        with self._condition:
            self._queue.append(job_id)
            self._condition.notify_all()

    def queue_position(self, job_id: str) -> int | None:
        """1 when the job is next, 2 when one other waits before it …; None when not waiting."""
        with self._condition:
            return self._queue.index(job_id) + 1 if job_id in self._queue else None

    def ahead(self, job_id: str) -> int | None:
        """The audits that will run before a waiting job: those waiting before it and the one
        running; None when it is not waiting."""
        with self._condition:
            if job_id not in self._queue:
                return None
            return self._queue.index(job_id) + (self._current is not None)

    @property
    def current(self) -> str | None:
        return self._current

    def cancel(self, job_id: str) -> bool:
        """Cancel a waiting job now, or the running one at its next batch. False if neither."""
        with self._condition:
            if job_id in self._queue:
                self._queue.remove(job_id)
                self.store.update(
                    job_id, status="cancelled", finished_at=now(), message="Cancelled before it started."
                )
                return True
            if job_id == self._current:
                self._cancelled.add(job_id)
                return True
        return False

    def cancelling(self, job_id: str) -> bool:
        return job_id in self._cancelled

    def _loop(self) -> None:
        while True:
            with self._condition:
                while not self._queue and not self._stopping:
                    self._condition.wait()
                if self._stopping:
                    return
                job_id = self._queue.popleft()
                self._current = job_id
            try:
                self._run(job_id)
            except Exception:  # never let one job kill the worker
                log.exception("job %s", job_id)
            finally:
                with self._condition:
                    self._current = None
                    self._cancelled.discard(job_id)

    def _run(self, job_id: str) -> None:
        record = self.store.update(job_id, status="running", started_at=now(), stages=[], message=None)
        models_reached = False  # a step past the benchmark's twins: evidence may have been computed

        def progress(label: str, done: int, total: int) -> None:
            nonlocal models_reached
            models_reached = models_reached or label != TWINS
            self.store.progress(job_id, label, done, total)
            # the analysis's last report lets the report through: it is done, and stopping there
            # would throw a finished audit away
            finished = label == ANALYSIS and done >= total
            if job_id in self._cancelled and not finished:
                raise _JobStopped("cancelled")
            if self._stopping:
                raise _JobStopped("shutdown")

        changes: dict[str, Any]
        try:
            report = self.audit(record.audit_config(), progress)
        except _JobStopped as stop:
            kept = (
                "Evidence computed so far is kept in the cache: run it again to resume."
                if models_reached
                else "It stopped while the benchmark's twins were being made, before any model work: "
                "nothing was computed to keep."
            )
            if stop.why == "cancelled":
                changes = {"status": "cancelled", "message": kept}
            else:
                changes = {
                    "status": "interrupted",
                    "message": f"The server stopped during this audit. {kept}",
                }
        except ContamcheckError as exc:
            changes = {"status": "failed", "message": record.as_uploaded(str(exc))}
        except Exception as exc:
            log.exception("audit %s failed", job_id)
            detail = str(exc).splitlines()[0] if str(exc) else ""
            changes = {
                "status": "failed",
                "message": f"Internal error ({type(exc).__name__}: {detail}). This is a bug; the server's "
                "log has the traceback.",
            }
        else:
            self.store.save_report(job_id, report)
            changes = {
                "status": "done",
                "verdict_code": report.verdict.code,
                "verdict_label": report.verdict.label,
                "index_value": report.index.value,
                "index_band": report.index.band,
                "reference_label": reference_line(report),
            }
        current = self.store.get(job_id)
        stages = current.stages if current is not None else []
        self.store.update(job_id, finished_at=now(), stages=stages, **changes)
