"""Writing and reading reports safely: never a half-written file."""

from __future__ import annotations

import errno
import json
import math
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any, get_args

import numpy as np
from pydantic import BaseModel, ValidationError

from ..errors import InputError, ReportInvalid, ReportUnreadable, RuntimeFailure
from .model import SCHEMA_VERSION, Report, schema_minor


def check_writable(path: str | Path, flag: str) -> Path:
    """Fail before any work is done when an output file can't be written."""
    text = str(path)
    if not text.strip() or text == "-":
        hint = " (--json prints the report on stdout)" if text == "-" else ""
        raise InputError(f"{flag} needs a file name, got {text!r}{hint}.")
    if text.endswith(("/", os.sep)):
        raise InputError(f"{flag} {text!r} ends with a slash; give a file name, not a folder.")
    target = Path(path).expanduser()
    if target.is_dir():
        raise InputError(f"{flag} {text!r} is a folder; give a file name.")
    if target.exists() and not target.is_file():  # a device or a pipe: written in place
        if not os.access(target, os.W_OK):
            raise InputError(f"{flag} {text!r} is not writable.")
        return target
    if target.is_file() and not os.access(target, os.W_OK):  # read-only, or immutable (chattr +i)
        raise InputError(
            f"{flag} {text!r} exists and can't be written (read-only or immutable); give another name, "
            "or make it writable (chmod u+w; lsattr shows an immutable one)."
        )
    parent = target.resolve().parent
    if not parent.is_dir():
        raise InputError(f"{flag} {text!r}: the folder {str(target.parent)!r} does not exist.")
    try:  # a real file, made and removed: os.access can't see a read-only file system or /proc
        with tempfile.NamedTemporaryFile(dir=parent, prefix=f".{target.name[:50]}.", suffix=".check"):
            pass
    except OSError as exc:
        raise InputError(f"{flag} {text!r}: can't write in {str(parent)!r} ({exc.strerror}).") from None
    return target


def write_atomic(path: str | Path, text: str, *, audited: bool = True) -> None:
    """Write ``text`` to a temporary file beside ``path`` and rename it into place.

    Through a symbolic link, the file it points to is replaced, not the link; a device or a pipe
    (``/dev/null``, ``/dev/stdout``) is written in place, never renamed over. A failed write (a full
    disk) is a :class:`RuntimeFailure` that names the file (``audited``: written after an audit,
    whose evidence the cache keeps; else a saved report rendered again).
    """
    try:
        _write(Path(path), text)
    except OSError as exc:
        then = (
            "Run again once it can be written (the cache, unless --no-cache, keeps what the audit computed)."
            if audited
            else "Make room or pick another path, and run it again."
        )
        raise RuntimeFailure(f"Can't write {str(path)!r}: {exc.strerror or exc}. {then}") from None


def _write(target: Path, text: str) -> None:
    if target.exists() and not target.is_file():
        with target.open("w", encoding="utf-8", newline="") as stream:
            stream.write(text)
        return
    target = target.resolve()
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name[:50]}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
            stream.write(text)
        os.chmod(temporary, 0o666 & ~_UMASK)  # as open() would create it, not mkstemp's 0600
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _read_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _read_umask()  # once, at import: os.umask is process-wide, so never from worker threads


def to_json(report: Report) -> str:
    """The report as the JSON the CLI's ``--json`` and ``--output`` write (``read_report`` reads it).
    A report changed in memory so that it contradicts itself raises :class:`ReportInvalid`, as does
    one with a NaN or an infinity where every report holds a number (``run.duration_s``): JSON has
    no such number, and the null written for it made a file ``read_report`` refused."""
    saved = as_saved(report)
    if where := _constant_at(saved):
        raise ReportInvalid(
            f"The report can't be saved: {where} is not a number (NaN or infinite), where every report "
            "holds one. Change it back, or run the audit again."
        )
    return saved.model_dump_json(indent=2) + "\n"


def _constant_at(value: object, path: str = "") -> str | None:
    """Where the first NaN or infinity in a report lies, as a dotted path (``tests.5.n``), if any."""
    if isinstance(value, BaseModel):
        parts: Iterable[tuple[object, object]] = (
            (name, getattr(value, name)) for name in type(value).model_fields
        )
    elif isinstance(value, (list, tuple)):
        parts = enumerate(value)
    elif isinstance(value, dict):
        parts = value.items()
    else:
        return path if _is_constant(value) else None
    for key, part in parts:
        if found := _constant_at(part, f"{path}.{key}" if path else str(key)):
            return found
    return None


def as_saved(report: Report) -> Report:
    """The report as its file holds it, checked as ``read_report`` checks a file: what renders a
    report made or changed in memory. A NaN or an infinity is a number not computed (null in the
    file, "not scored" in a rendering), not a value a renderer meets; a report whose fields were
    changed so that it contradicts itself (a status its p-value does not give, a rate above 1)
    raises :class:`ReportInvalid` rather than be written or shown. A copy."""
    if not isinstance(report, Report):
        raise TypeError(f"expected a contamcheck Report, got {type(report).__name__}")
    source = report
    if _constant_at(report) is not None:
        source = report.model_copy(deep=True)
        _null_constants(source)
    try:
        return Report.model_validate(_encodable(source.model_dump(warnings=False)))  # said below
    except ValidationError as exc:
        raise ReportInvalid(
            f"The report can't be saved or shown: {first_error(exc)}. Change it back, or run the audit again."
        ) from None


def _encodable(value: Any) -> Any:
    """``value`` with each lone surrogate in its texts as U+FFFD: a file name that is no UTF-8
    (its bytes kept as surrogates, as Python reads such names) can't be written in UTF-8 (the JSON,
    the HTML), and stopped the audit at its very end."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return "".join("\ufffd" if "\ud800" <= char <= "\udfff" else char for char in value)
        return value
    if isinstance(value, dict):
        return {_encodable(key): _encodable(part) for key, part in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_encodable(part) for part in value)
    return value


def _is_constant(value: object) -> bool:
    return isinstance(value, (float, np.floating)) and not math.isfinite(value)


def _may_be_none(model: BaseModel, name: str) -> bool:
    return type(None) in get_args(type(model).model_fields[name].annotation)


def _null_constants(value: object) -> None:
    """Each NaN or infinity in a model's fields, lists and dicts (in place) as None, where None
    may stand (a number every report holds, the run's duration say, stays as it is)."""
    if isinstance(value, BaseModel):
        for name in type(value).model_fields:
            field = getattr(value, name)
            interval = isinstance(field, tuple) and any(_is_constant(part) for part in field)
            if (_is_constant(field) or interval) and _may_be_none(value, name):
                object.__setattr__(value, name, None)  # an interval: one end not computed is none
            else:
                _null_constants(field)
    elif isinstance(value, list):
        for index, part in enumerate(value):
            if _is_constant(part):
                value[index] = None
            else:
                _null_constants(part)
    elif isinstance(value, dict):
        for key, part in value.items():
            if _is_constant(part):
                value[key] = None
            else:
                _null_constants(part)


def _finite(literal: str) -> float:
    """A number of the file, which ``float`` would make infinite where it is too large (1e400):
    read as such, it could not be written again."""
    value = float(literal)
    if not math.isfinite(value):
        shown = literal if len(literal) <= 24 else literal[:20] + "..."
        raise ValueError(f"the number {shown} is too large for a report (the largest is about 1.8e308)")
    return value


def _no_constant(name: str) -> None:
    """A report never holds NaN or Infinity (a number that could not be computed is null)."""
    raise ValueError(f"{name} is not a number a report holds (one that could not be computed is null)")


def _once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object whose keys each appear once: a key given twice is read as its last value here and
    as its first by other readers, so a gate and a person could see two verdicts."""
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError(f"the key {key!r} appears twice in one object")
        seen[key] = value
    return seen


def read_report(path: str | Path) -> Report:
    """Load a saved JSON report, with clear errors for anything that isn't one."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(
            f"read_report takes the path of a saved .json report (a str or a Path), not {type(path).__name__}"
        )
    if not str(path).strip():
        raise ReportUnreadable("The report's path is empty; pass the saved .json report's path.")
    source = Path(path).expanduser()
    shown = str(path) if len(str(path)) <= 200 else f"{str(path)[:200]}…"
    text = str(path).lstrip().startswith("{")  # JSON text passed for a path
    try:
        source.stat()  # not exists(), which takes any error for "no such file" from Python 3.12
        exists = True
    except (FileNotFoundError, NotADirectoryError):
        exists = False
    except (OSError, ValueError) as exc:  # a name too long for the file system, a NUL in it
        if not text:
            if isinstance(exc, OSError) and exc.errno == errno.ENAMETOOLONG:  # as the CLI says it
                raise ReportUnreadable(f"A path is too long for this system: {shown!r}.") from None
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            raise ReportUnreadable(f"Can't read the report {shown!r}: {reason}.") from None
        exists = False
    if not exists:
        if text:
            raise ReportUnreadable(
                "read_report takes the path of a saved report, not its JSON text (text reads with "
                "Report.model_validate_json, without read_report's check of the schema's version)."
            )
        raise ReportUnreadable(f"Report file {shown!r} does not exist.")
    if source.is_dir():
        raise ReportUnreadable(f"{shown!r} is a folder; pass the report's .json file in it.")
    if not source.is_file():
        raise ReportUnreadable(
            f"{shown!r} is not a regular file (a device or a pipe); pass a saved .json report."
        )
    try:
        # utf-8-sig: a report saved again by an editor that starts its files with a byte-order mark
        saved = source.read_text(encoding="utf-8-sig")
        data = json.loads(saved, parse_constant=_no_constant, parse_float=_finite, object_pairs_hook=_once)
    except OSError as exc:
        raise ReportUnreadable(f"Can't read the report {str(path)!r}: {exc.strerror or exc}.") from None
    except (UnicodeDecodeError, json.JSONDecodeError, ValueError) as exc:
        # Python's own advice for a number of over 4,300 digits names a function, not the problem
        said = "a number in it is too long (over 4,300 digits)" if "int_max_str_digits" in str(exc) else exc
        raise ReportUnreadable(f"{str(path)!r} is not a JSON report: {said}.") from None
    except RecursionError:
        raise ReportUnreadable(
            f"{str(path)!r} is not a JSON report: it is nested too deeply to read."
        ) from None
    if not isinstance(data, dict) or data.get("tool") != "contamcheck":
        raise ReportUnreadable(f'{str(path)!r} is not a contamcheck report (no "tool": "contamcheck").')
    version = str(data.get("schema_version", ""))
    major, ours = version.split(".")[0], SCHEMA_VERSION.split(".")[0]
    newer = (major.isdigit() and int(major) > int(ours)) or (
        major == ours
        and schema_minor(version) > schema_minor(SCHEMA_VERSION)  # fields this version does not know
    )
    if newer:
        raise ReportUnreadable(
            f"{str(path)!r} has report schema {version}, newer than this contamcheck reads "
            f"({SCHEMA_VERSION}): upgrade contamcheck to read it."
        )
    if major != ours:
        raise ReportUnreadable(
            f"{str(path)!r} has report schema {version or '(none)'}; this contamcheck reads "
            f"{SCHEMA_VERSION}. Re-run the audit with this version."
        )
    try:
        # strict, as the schema reads: a number given as text ("0.5"), a count as 3.0 or a flag as
        # "yes" is refused, not read as what it might have meant (a generator of reports learns here,
        # not from a validator elsewhere that holds them to the schema)
        return Report.model_validate_json(saved, strict=True)
    except ValidationError as exc:
        raise ReportUnreadable(f"{str(path)!r} is not a valid report: {first_error(exc)}.") from None


def first_error(exc: ValidationError) -> str:
    """The first thing wrong, where it is: ``tests.1.flag_rate: Input should be ...``."""
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    said = first["msg"].removeprefix("Value error, ")  # pydantic's words for a validator's ValueError
    return f"{where}: {said}" if where else said
