"""What an audit is asked to do. The CLI, the web UI and library users all build one of these."""

from __future__ import annotations

import dataclasses
import difflib
import functools
import math
import numbers
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from .backends import ModelOptions, default_threads
from .errors import InputError

DEFAULT_LIMIT = 200
DEFAULT_ALPHA = 0.001
DEFAULT_K = 0.2
MIN_PERMUTATIONS = 10_000
# About 30 s per test on 200 questions (bench/permutations.py, docs/PERFORMANCE.md); more would hold
# an audit (and the web UI's one worker) in its analysis for many minutes without progress.
MAX_PERMUTATIONS = 10_000_000
DEFAULT_ORDER_SHARDS = 10
DEFAULT_ORDER_PERMUTATIONS = 5
MAX_ORDER_PERMUTATIONS = 10_000
Device = Literal["auto", "cpu", "cuda", "mps"]
Dtype = Literal["auto", "float32", "bfloat16", "float16"]
DEVICES: tuple[str, ...] = get_args(Device)
DTYPES: tuple[str, ...] = get_args(Dtype)


def too_long(value: str) -> bool:
    """Longer than Linux takes as a path (4,096 bytes with its end, 255 a name), so no file or Hub id."""

    def size(text: str) -> int:
        try:
            return len(os.fsencode(text))
        except UnicodeEncodeError:  # a lone surrogate no file name can hold: count it generously
            return len(text.encode("utf-8", "surrogatepass"))

    return size(value) >= 4096 or any(size(part) > 255 for part in value.split("/"))


# what each field must hold, checked before its value (a library caller has no type checker to
# stop ``limit="20"`` or ``seed=1.5``, which failed deep inside, some only after the model's work)
TEXT_FIELDS = ("model", "benchmark", "field", "control", "control_field", "reference", "cache")
PATH_FIELDS = ("model", "benchmark", "control", "reference", "cache")  # a pathlib.Path is its text
WHOLE_FIELDS = ("limit", "seed", "twins", "order_shards", "order_permutations")
OPTIONAL_WHOLE_FIELDS = ("permutations", "batch_size", "threads")
NUMBER_FIELDS = ("k", "alpha")
SWITCH_FIELDS = ("quick", "twinless", "trust_remote_code", "ordered", "no_cache")


def option_name(field: str) -> str:
    """The command line's name for a field, as the errors say it."""
    special = {"model": "MODEL", "benchmark": "BENCHMARK", "limit": "-n/--limit", "k": "-k"}
    return special.get(
        field, "--no-order (ordered)" if field == "ordered" else "--" + field.replace("_", "-")
    )


@dataclass(frozen=True)
class AuditConfig:
    """An audit of MODEL on BENCHMARK.

    ``reference`` is ``"auto"`` (the GPT-2 closest in size but the tested model, when it can be
    loaded), ``"none"``, or a model name or path. ``tests`` None means every test that applies;
    ``quick`` keeps only the likelihood tests (one forward pass per text, no generation).
    ``permutations`` None means enough for a p-value to fall well below alpha over the number of
    tests. Errors name the command line's options: a field is its option's long name with
    underscores (``order_shards`` is ``--order-shards``), but ``ordered=False``, ``--no-order``.
    """

    model: str
    benchmark: str
    field: str | None = None
    limit: int = DEFAULT_LIMIT
    seed: int = 0
    control: str | None = None
    control_field: str | None = None
    reference: str = "auto"
    tests: Sequence[str] | None = None  # kept as a list of lower-case names
    quick: bool = False
    k: float = DEFAULT_K
    alpha: float = DEFAULT_ALPHA
    permutations: int | None = None
    fail_on: Literal["likely", "evidence"] = "likely"
    twins: int = 1
    twinless: bool = False  # questions without a twin join the likelihood tests, judged by the bulk
    batch_size: int | None = None
    device: Device = "auto"  # checked at run time too, for callers without a type checker
    dtype: Dtype = "auto"
    threads: int | None = None
    trust_remote_code: bool = False
    ordered: bool = True
    cache: str | None = None  # folder of the evidence cache (default: the user cache folder)
    no_cache: bool = False  # keep evidence in memory only
    order_shards: int = DEFAULT_ORDER_SHARDS  # canonical-order: shards of consecutive questions
    order_permutations: int = DEFAULT_ORDER_PERMUTATIONS  # and reorderings per shard

    def __post_init__(self) -> None:
        self._check_types()
        checks: list[tuple[bool, str]] = [
            (
                bool(self.model and self.model.strip()),
                "MODEL is empty: pass a Hub id, a local folder or a .gguf file.",
            ),
            (self.limit >= 1, f"-n/--limit must be at least 1 (got {self.limit})."),
            (0 < self.k <= 1, f"-k must be a fraction in (0, 1], e.g. 0.2 for 20% (got {self.k})."),
            (
                0 < self.alpha < 1,
                f"--alpha must be between 0 and 1, e.g. 0.001 (got {self.alpha}).",
            ),
            (
                self.permutations is None or 100 <= self.permutations <= MAX_PERMUTATIONS,
                f"--permutations must be between 100 and {MAX_PERMUTATIONS:,} (got {self.permutations}).",
            ),
            (
                self.fail_on in ("likely", "evidence"),
                f"--fail-on must be likely or evidence (got {self.fail_on!r}).",
            ),
            (1 <= self.twins <= 8, f"--twins must be between 1 and 8 (got {self.twins})."),
            (
                self.batch_size is None or self.batch_size >= 1,
                f"--batch-size must be at least 1 (got {self.batch_size}).",
            ),
            (
                self.device in DEVICES,
                f"--device must be one of {', '.join(DEVICES)} (got {self.device!r}).",
            ),
            (
                self.dtype in DTYPES,
                f"--dtype must be one of {', '.join(DTYPES)} (got {self.dtype!r}).",
            ),
            (
                self.threads is None or self.threads >= 1,
                f"--threads must be at least 1 (got {self.threads}).",
            ),
            (self.order_shards >= 5, f"--order-shards must be at least 5 (got {self.order_shards})."),
            (
                # Python's random takes a negative seed's absolute value (-1 would draw as 1), and a
                # report's JSON keeps integers a 64-bit reader can take
                0 <= self.seed < 2**63,
                f"--seed must be between 0 and 2**63 - 1 (got {self.seed}).",
            ),
            (
                1 <= self.order_permutations <= MAX_ORDER_PERMUTATIONS,
                f"--order-permutations must be between 1 and {MAX_ORDER_PERMUTATIONS:,} (got "
                f"{self.order_permutations}); each reordering is one more text for the model to score "
                "(Oren et al. used 250 per shard, on GPUs).",
            ),
        ]
        reference = self.reference.strip()
        object.__setattr__(
            self, "reference", reference.lower() if reference.lower() in ("auto", "none") else reference
        )
        empty_reference = "--reference is empty: pass auto, none, or a model (Hub id, folder, .gguf)."
        checks.append((bool(self.reference), empty_reference))
        # an empty value (a variable left unset) would be taken as no value: the guessed column,
        # the number twins, where the command asked for another
        checks += [
            (value is None or bool(value.strip()), f"{flag} is empty: {fix}.")
            for flag, value, fix in (
                (
                    "--field",
                    self.field,
                    "name the column that holds the questions, or leave --field out to have it guessed",
                ),
                (
                    "--control",
                    self.control,
                    "give the control file, or leave --control out to compare with number twins",
                ),
                (
                    "--control-field",
                    self.control_field,
                    "name the control file's column, or leave --control-field out to have it guessed",
                ),
            )
        ]
        names = {
            "MODEL": self.model,
            "BENCHMARK": self.benchmark,
            "--field": self.field,
            "--control": self.control,
            "--control-field": self.control_field,
            "--reference": self.reference,
            "--cache": self.cache,
        }
        checks += [
            (not too_long(value), f"{flag} is too long to be a name or a path ({len(value):,} characters).")
            for flag, value in names.items()
            if value is not None
        ]
        for ok, message in checks:
            if not ok:
                raise InputError(message)
        if self.cache is not None and self.no_cache:
            raise InputError(
                "--cache and --no-cache contradict each other: give --cache DIR to keep the evidence "
                "there, or --no-cache to keep it in memory only."
            )
        if self.twinless and self.control is not None:
            raise InputError(
                "--twinless lets questions without a number twin into the likelihood tests; with "
                "--control every question is compared with the control file already: drop one of them."
            )
        if self.control_field is not None and self.control is None:
            raise InputError(
                "--control-field names a column of the control file, and no control file was given: "
                "pass --control FILE too (or drop --control-field)."
            )
        if self.tests is not None:
            # every test's name is lower case; MIN-K and " zlib" mean the same tests. A tuple, so
            # that a frozen config's tests can't be changed in place either.
            # A name given twice is one test (the report lists each once).
            chosen = tuple(dict.fromkeys(name.strip().lower() for name in self.tests if name.strip()))
            object.__setattr__(self, "tests", chosen)
            if not chosen:
                raise InputError("--tests is empty: name at least one test (see `contamcheck benchmarks`).")
            if not self.ordered and chosen == ("canonical-order",):  # with others, it is skipped
                raise InputError(
                    "--no-order says the benchmark's rows are not in their published order, which "
                    "--tests canonical-order needs: drop one of them."
                )

    def _check_types(self) -> None:
        def wrong(field: str, wanted: str) -> InputError:
            value = getattr(self, field)
            return InputError(
                f"{option_name(field)} must be {wanted} (got {value!r}, of type {type(value).__name__})."
            )

        for field in PATH_FIELDS:
            value = getattr(self, field)
            if isinstance(value, os.PathLike):
                text = os.fspath(value)
                # a path object is a path: Path("./sample") prints as "sample", the built-in
                # benchmark's name, and Path("gpt2") as a Hub id; "./" keeps it a local path (a home
                # folder's "~" stays first, for expanduser)
                if (
                    isinstance(text, str)
                    and not os.path.isabs(text)
                    and not text.startswith(("./", "../", "~"))
                ):
                    text = os.path.join(".", text)
                object.__setattr__(self, field, text)
        for field in TEXT_FIELDS:
            value = getattr(self, field)
            if not (
                isinstance(value, str) or (value is None and field not in ("model", "benchmark", "reference"))
            ):
                raise wrong(field, "text")
        for field in (*WHOLE_FIELDS, *OPTIONAL_WHOLE_FIELDS):
            value = getattr(self, field)
            if field in OPTIONAL_WHOLE_FIELDS and value is None:
                continue
            if not isinstance(value, numbers.Integral) or isinstance(value, bool):
                raise wrong(field, "a whole number" + (" or None" if field in OPTIONAL_WHOLE_FIELDS else ""))
            object.__setattr__(self, field, int(value))  # numpy's int64 too, as a plain int
        for field in NUMBER_FIELDS:
            value = getattr(self, field)
            if not isinstance(value, numbers.Real) or isinstance(value, bool):
                raise wrong(field, "a number")
            object.__setattr__(self, field, float(value))
        for field in SWITCH_FIELDS:
            if not isinstance(getattr(self, field), bool):
                raise wrong(field, "True or False")
        if self.tests is not None:
            if isinstance(self.tests, str) or not isinstance(self.tests, Iterable):
                raise wrong("tests", 'a list of test names, e.g. ["min-k", "zlib"]')
            object.__setattr__(self, "tests", tuple(self.tests))  # a generator is read once, here
            if not all(isinstance(name, str) for name in self.tests):
                raise wrong("tests", 'a list of test names, e.g. ["min-k", "zlib"]')

    @property
    def threads_used(self) -> int:
        """The threads an in-process model runs with: --threads, but never more than the cores this
        process may use (more slow torch down several times over; a stored job or a script's
        ``--threads 2`` may meet a machine with fewer cores than it was written on)."""
        return min(self.threads, default_threads()) if self.threads else default_threads()

    def model_options(self, cache_dir: Path | None) -> ModelOptions:
        return ModelOptions(
            device=self.device,
            dtype=self.dtype,
            threads=self.threads_used if self.threads else None,
            trust_remote_code=self.trust_remote_code,
            cache_dir=cache_dir,
        )

    def permutations_for(self, number_of_tests: int) -> int:
        """Enough permutations that p can fall ten times below alpha / number of tests, up to the cap.

        Below alpha of about 3e-6 the cap binds: the p-values' floor then says whether the tests could
        still reach alpha, and the verdict says "inconclusive" where none could.
        """
        if self.permutations is not None:
            return self.permutations
        wanted = 10 * max(1, number_of_tests) / self.alpha  # infinite for an alpha of 1e-310
        return MAX_PERMUTATIONS if wanted >= MAX_PERMUTATIONS else max(MIN_PERMUTATIONS, math.ceil(wanted))


# the command line's spellings that are no field, as a Python caller may try them
_SPELT_ON_THE_COMMAND_LINE = {
    "n": "limit",
    "no_order": "ordered=False",
    "model_path": "model",
    "order": "ordered",
    "json": None,
    "output": None,
    "csv": None,
    "html": None,
    "quiet": None,
    "control_file": "control",
}
# keywords that name something other than a setting: what to do instead
_NOT_SETTINGS = {
    "progress": "progress is audit()'s: audit(config, progress=callback)",
    "store": "store is audit()'s: audit(config, store=...)",
    "low_memory": (
        "--low-memory is the process's, not the audit's: call "
        "contamcheck.memory.return_freed_memory() once, before the audit"
    ),
    "no_low_memory": "--no-low-memory is the process's: leave contamcheck.memory alone",
}


def _explained_init(generated: Any) -> Any:
    """The dataclass's ``__init__``, saying which field was meant for a keyword it has not (the
    generated one says only "unexpected keyword argument 'no_order'")."""
    names = [f.name for f in dataclasses.fields(AuditConfig)]

    @functools.wraps(generated)
    def __init__(self: AuditConfig, *args: Any, **kwargs: Any) -> None:
        if args and isinstance(args[0], Mapping):
            raise TypeError("AuditConfig takes its settings as keywords, not a dict: AuditConfig(**settings)")
        for keyword in kwargs:
            if keyword in names:
                continue
            meant = _SPELT_ON_THE_COMMAND_LINE.get(keyword, "")
            if keyword in _NOT_SETTINGS:
                hint = _NOT_SETTINGS[keyword]
            elif meant is None:
                hint = (
                    "an output is no setting: save what audit() returns with "
                    "contamcheck.report.to_json (to_html, to_csv)"
                )
            else:
                close = [meant] if meant else difflib.get_close_matches(keyword, names, n=1)
                hint = f"did you mean {close[0]}?" if close else f"its fields: {', '.join(names)}"
            raise TypeError(f"AuditConfig has no setting {keyword!r}: {hint}")
        generated(self, *args, **kwargs)

    return __init__


setattr(AuditConfig, "__init__", _explained_init(AuditConfig.__init__))  # noqa: B010 (assigned, mypy says a method can't be)
