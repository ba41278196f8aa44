"""The audit form: what it holds, and how it becomes an :class:`~contamcheck.config.AuditConfig`.

Every field maps to a CLI flag (docs/WEB_UI.md has the table), so an error message that names a flag
names the form field labelled with it. Uploaded files are checked (extension, size) and stored
under generated names by the :class:`~contamcheck.web.jobs.JobStore`; a path typed into the form is
only ever read, by the audit, as it would be from the command line.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..backends.packaged import PACKAGED, check_packaged
from ..backends.server import parse_spec
from ..benchmarks import BUILTINS
from ..config import DEFAULT_ALPHA, DEFAULT_K, DEFAULT_LIMIT, AuditConfig, too_long
from ..errors import InputError
from ..methods import TESTS

UPLOAD_SUFFIXES = (".jsonl", ".json", ".csv", ".txt")
DEFAULT_MODEL_SUGGESTIONS = tuple(f"pkg:{name}" for name in PACKAGED)
REFERENCE_SUGGESTIONS = ("auto", "none", *DEFAULT_MODEL_SUGGESTIONS)
# the select's choice when the audit being changed uploaded its benchmark: none, until one is made
CHOOSE_AGAIN = ""


@dataclass
class Upload:
    """A file sent with the form: its name as the browser gave it, and its bytes."""

    filename: str
    data: bytes


@dataclass
class FormValues:
    """What the person typed, kept as text to refill the form after an error."""

    model: str = ""
    benchmark: str = "sample"  # a built-in name (the select)
    benchmark_path: str = ""  # or a file path / hf: spec typed in
    # the benchmark file the audit being changed uploaded: a form can't hold a file, so it must be
    # chosen again
    uploaded: list[str] = dataclasses.field(default_factory=list)
    control_again: str = ""  # the control file that audit uploaded: choose it again, or untick to drop it
    field: str = ""
    control_field: str = ""
    reference: str = "auto"
    tests: list[str] = dataclasses.field(default_factory=TESTS.names)
    limit: str = str(DEFAULT_LIMIT)
    seed: str = "0"
    quick: bool = False
    twinless: bool = False
    no_order: bool = False
    alpha: str = str(DEFAULT_ALPHA)
    k: str = str(DEFAULT_K)
    permutations: str = ""
    twins: str = "1"
    threads: str = ""

    @classmethod
    def from_form(cls, form: Mapping[str, str], tests: list[str]) -> FormValues:
        def text(name: str, default: str = "") -> str:
            value = form.get(name)
            return value.strip() if isinstance(value, str) else default

        return cls(
            model=text("model"),
            benchmark=text("benchmark", "sample"),
            benchmark_path=text("benchmark_path"),
            field=text("field"),
            control_field=text("control_field"),
            control_again=text("control_again"),
            reference=text("reference") or "auto",
            tests=tests,
            limit=text("limit"),
            seed=text("seed"),
            quick=bool(text("quick")),
            twinless=bool(text("twinless")),
            no_order=bool(text("no_order")),
            alpha=text("alpha"),
            k=text("k"),
            permutations=text("permutations"),
            twins=text("twins"),
            threads=text("threads"),
        )

    @classmethod
    def from_config(
        cls, config: AuditConfig, benchmark_label: str, control_label: str | None = None
    ) -> FormValues:
        """The form as it was for a stored job (an uploaded file has to be chosen again)."""
        builtin = config.benchmark in BUILTINS
        uploaded_benchmark = not builtin and benchmark_label != config.benchmark
        uploaded = [benchmark_label] if uploaded_benchmark else []  # a control file: control_again
        return cls(
            uploaded=uploaded,
            control_again=control_label if config.control is not None and control_label else "",
            model=config.model,
            benchmark=config.benchmark if builtin else CHOOSE_AGAIN if uploaded_benchmark else "sample",
            benchmark_path="" if builtin or benchmark_label != config.benchmark else config.benchmark,
            field=config.field or "",
            control_field=config.control_field or "",
            reference=config.reference,
            tests=list(config.tests) if config.tests else TESTS.names(),
            limit=str(config.limit),
            seed=str(config.seed),
            quick=config.quick,
            twinless=config.twinless,
            no_order=not config.ordered,
            alpha=str(config.alpha),
            k=str(config.k),
            permutations="" if config.permutations is None else str(config.permutations),
            twins=str(config.twins),
            threads="" if config.threads is None else str(config.threads),
        )

    def more_settings_changed(self) -> bool:
        """Whether a setting under "More settings" differs from its default (the panel opens)."""
        defaults = FormValues()
        fields = ("alpha", "k", "twins", "permutations", "threads", "quick", "twinless", "no_order")
        return any(getattr(self, name) not in ("", getattr(defaults, name)) for name in fields)  # "": default


@dataclass
class Submission:
    config: AuditConfig
    benchmark_label: str
    control_label: str | None
    uploads: list[str]


def check_upload(upload: Upload, what: str, max_bytes: int) -> tuple[str, str]:
    """The stored stem and suffix for an upload, or :class:`InputError` (size, extension, empty)."""
    name = Path(upload.filename.replace("\\", "/")).name  # browsers may send a path
    suffix = "".join(Path(name).suffixes[-1:]).lower()
    if suffix not in UPLOAD_SUFFIXES:
        raise InputError(
            f"{what}: {name!r} is not a question file; upload a {', '.join(UPLOAD_SUFFIXES)} file."
        )
    if len(upload.data) > max_bytes:
        raise InputError(f"{what}: {name!r} is larger than the limit of {megabytes(max_bytes)} MB.")
    if not upload.data.strip():
        raise InputError(f"{what}: {name!r} is empty.")
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", name[: -len(suffix)]).strip("._-")[:80] or "upload"
    return stem, suffix


def build_config(
    values: FormValues,
    benchmark_spec: str,
    control_spec: str | None,
) -> AuditConfig:
    """The audit the form asks for. Numbers are checked here; everything else by AuditConfig."""
    all_tests = TESTS.names()
    chosen = [name for name in values.tests if name]
    for name in chosen:
        TESTS.get(name)  # an unknown name fails here, with a suggestion
    if not chosen:
        raise InputError("Tests (--tests): tick at least one test.")
    if values.control_field and control_spec is None:
        raise InputError(
            "Control question column (--control-field) names a column of the control file, and "
            "none was chosen: choose the control file (again, when changing an earlier audit), "
            "or clear the column."
        )
    return AuditConfig(
        model=absolute_if_local(values.model),
        benchmark=benchmark_spec,
        field=values.field or None,
        limit=_int(values.limit, "Questions (-n/--limit)", DEFAULT_LIMIT),
        seed=_int(values.seed, "Seed (--seed)", 0),
        control=control_spec,
        control_field=values.control_field or None,
        reference=absolute_if_local(values.reference or "auto"),
        tests=None if set(chosen) == set(all_tests) else chosen,  # all ticked: the CLI's default
        quick=values.quick,
        twinless=values.twinless,
        k=_float(values.k, "Min-K fraction (-k)", DEFAULT_K),
        alpha=_float(values.alpha, "Alpha (--alpha)", DEFAULT_ALPHA),
        permutations=_optional_int(values.permutations, "Permutations (--permutations)"),
        twins=_int(values.twins, "Twins per question (--twins)", 1),
        threads=_optional_int(values.threads, "Threads (--threads)"),
        ordered=not values.no_order,
        trust_remote_code=False,  # never from the browser: a repository's code would run here
    )


def absolute_if_local(spec: str) -> str:
    """A relative path typed into the form that names a file or folder here, as an absolute path
    (links kept as typed): a job stored with it reads the same file when run again from a server
    started elsewhere. Names that are not paths here (Hub ids with no such folder, ``pkg:``,
    ``hf:``) stay; so does a built-in benchmark's name, which the caller does not pass."""
    if spec.startswith("fake:"):  # the file a stand-in memorised: fake:memorise=FILE[:...]
        return ":".join(
            f"memorise={absolute_if_local(part[len('memorise=') :])}"
            if part.startswith("memorise=")
            else part
            for part in spec.split(":")
        )
    if spec in ("auto", "none") or spec.startswith(("hf:", "pkg:", "openai:")):
        return spec
    path = Path(spec)
    if path.is_absolute() or spec.startswith("~"):
        return spec
    try:
        return os.path.abspath(spec) if path.exists() else spec
    except OSError:  # a name too long for a file: AuditConfig says so
        return spec


def megabytes(size: int) -> str:
    """A byte count as the MB a person set (``--max-upload-mb``): the shortest decimal that gives
    the same bytes, so 0.01 and 12.345, not 0.00999928; never in exponent form."""
    text = ""
    for digits in range(1, 18):
        text = f"{size / 2**20:.{digits}g}"
        if int(float(text) * 2**20) == size:
            break
    return f"{float(text):f}".rstrip("0").rstrip(".") if "e" in text else text


def _int(text: str, label: str, default: int) -> int:
    if not text:
        return default
    try:
        return int(text)
    except ValueError:
        raise InputError(f"{label} must be a whole number (got {_typed(text)}).") from None


def _float(text: str, label: str, default: float) -> float:
    if not text:
        return default
    try:
        return float(text)
    except ValueError:
        raise InputError(f"{label} must be a number, e.g. {default} (got {_typed(text)}).") from None


def _typed(text: str, shown: int = 40) -> str:
    """What was typed, as the error repeats it: a long value by its start and its length."""
    return repr(text) if len(text) <= shown else f"{text[:shown]!r}… ({len(text):,} characters)"


def _optional_int(text: str, label: str) -> int | None:
    return _int(text, label, 0) if text else None


def check_model(model: str, what: str = "Model") -> None:
    """Fail early on an empty model, one too long to be a name, an unknown pkg: name, or a typed
    local path that does not exist (``what``: "Model" or "Reference")."""
    if not model:
        raise InputError(
            f"{what}: give a Hugging Face Hub id, a local model folder or .gguf file, pkg:NAME, or "
            "openai:URL (a model server)."
        )
    if too_long(model):
        raise InputError(f"{what}: too long to be a name or a path ({len(model):,} characters).")
    if model.startswith(("pkg:", "openai:")):
        try:
            if model.startswith("pkg:"):
                check_packaged(model)  # known and installed: reading the weights is the audit's work
            else:
                parse_spec(model)  # a server address: asking the server is the audit's work
        except InputError as exc:
            raise InputError(f"{what}: {exc}") from None
    looks_local = model.startswith(("/", "./", "../", "~")) or model.endswith(".gguf")
    if looks_local and not Path(model).expanduser().exists():
        raise InputError(f"{what}: {model!r} does not exist on this machine. Check the path.")
