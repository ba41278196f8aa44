"""``contamcheck MODEL BENCHMARK`` and ``contamcheck run``: build the config, audit, render, exit."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from ..config import AuditConfig
from ..errors import InputError
from ..memory import return_freed_memory
from ..report import io
from ..report.model import Report
from ..report.terminal import render
from .output import stdout_console, write_stdout
from .progress import ProgressBars, ProgressMode

if TYPE_CHECKING:
    from ..evidence.cache import EvidenceCache


def config_from_options(model: str, benchmark: str, options: dict[str, Any]) -> AuditConfig:
    tests = (
        [t.strip() for t in options["tests"].split(",") if t.strip()]
        if options.get("tests") is not None
        else None
    )
    return AuditConfig(
        model=model,
        benchmark=benchmark,
        field=options.get("field"),
        limit=options["limit"],
        seed=options["seed"],
        control=options.get("control"),
        control_field=options.get("control_field"),
        reference=options["reference"],
        tests=tests,
        quick=options["quick"],
        k=options["k"],
        alpha=options["alpha"],
        permutations=options.get("permutations"),
        fail_on=options["fail_on"],
        twins=options["twins"],
        twinless=options["twinless"],
        batch_size=options.get("batch_size"),
        device=options["device"],
        dtype=options["dtype"],
        threads=options.get("threads"),
        trust_remote_code=options["trust_remote_code"],
        ordered=not options["no_order"],
        cache=options.get("cache"),
        no_cache=options["no_cache"],
        order_shards=options["order_shards"],
        order_permutations=options["order_permutations"],
    )


def run_audit(model: str, benchmark: str, options: dict[str, Any]) -> int:
    from ..pipeline import audit

    config = config_from_options(model, benchmark, options)
    inputs = {
        "the model": model,  # a .gguf file
        "the reference model": options.get("reference"),
        "the benchmark": benchmark,
        "the control file": options.get("control"),
    }
    cache = None if options["no_cache"] else options.get("cache") or ""
    options = {**options, **writable_outputs(options, inputs, cache)}
    low_memory = options.get("low_memory")  # None, the default: on where the C library allows it
    if low_memory is not False and not return_freed_memory() and low_memory:  # asked for, can't be
        Console(stderr=True).print("--low-memory has no effect here: it needs Linux with glibc.")
    quiet = options["quiet"] or options["as_json"]
    console = Console(stderr=True)
    mode: ProgressMode = "off" if quiet else "bars" if console.is_terminal else "lines"
    with ProgressBars(console, mode) as progress:
        report = audit(config, progress=progress)
    if not quiet:  # so a resumed or warm run shows that it was one
        console.print(Text(evidence_line(report), style="dim"), soft_wrap=True)
    show_report(report, options)
    return report.verdict.exit_code


def evidence_line(report: Report) -> str:
    """What this run took from the cache and what it computed, per model."""
    parts = [
        f"{role} {use.from_cache:,} of {use.requested:,} from the cache, {use.computed:,} computed"
        for role, use in report.run.evidence.items()
    ]
    return "Evidence requests: " + ("; ".join(parts) if parts else "none") + "."


OUTPUT_FLAGS = {"output": "--output", "csv_file": "--csv", "html_file": "--html"}


def writable_outputs(
    options: dict[str, Any], inputs: dict[str, str | None] | None = None, cache: str | None = ""
) -> dict[str, Any]:
    """The output files, each checked before any work is done (a bad path fails in a second), and
    never one of the files read (``inputs``: what each is, and its spec) nor one the evidence cache
    keeps (in the folder ``cache`` names: "" for the default one, None for none)."""
    from ..evidence.cache import cache_folder, is_cache, keeps

    checked = {
        key: io.check_writable(options[key], flag)
        for key, flag in OUTPUT_FLAGS.items()
        if options.get(key) is not None
    }
    files = [path.resolve() for path in checked.values() if not path.exists() or path.is_file()]
    if len(set(files)) < len(files):
        raise InputError("Two outputs name the same file; give each of --output, --csv and --html its own.")
    for key, path in checked.items():
        for what, spec in (inputs or {}).items():
            if spec and _same_file(path, spec):
                raise InputError(
                    f"{OUTPUT_FLAGS[key]} {str(options[key])!r} is {what} this command reads; writing there "
                    "would replace it. Give the output another name."
                )
        folders = [path.parent] if is_cache(path.parent) else []  # another audit's, say
        folders += [cache_folder(cache or None)] if cache is not None else []
        if folder := next((folder for folder in folders if keeps(folder, path)), None):
            raise InputError(
                f"{OUTPUT_FLAGS[key]} {str(options[key])!r} is a file the evidence cache keeps (in "
                f"{str(folder)!r}); writing there would replace what it holds. Give the output "
                "another name or folder."
            )
    return checked


def _same_file(path: Path, other: str) -> bool:
    """Do both name one file (a link or a second name counts)? A name that is no file here (gsm8k,
    a new output) is not."""
    try:
        return os.path.samefile(path, Path(other).expanduser())
    except OSError:
        return False


def show_report(report: Report, options: dict[str, Any], *, audited: bool = True) -> None:
    """Write and print a report as the output options say: every file rendered before any is
    written, so a report that fails to render leaves none of them half done (``audited``: just
    audited, not a saved report rendered again)."""
    texts = {}
    if options.get("output"):
        texts[options["output"]] = io.to_json(report)
    if options.get("csv_file"):
        from ..report.csv_report import to_csv

        texts[options["csv_file"]] = to_csv(report)
    if options.get("html_file"):
        from ..report.html_report import to_html

        texts[options["html_file"]] = to_html(report)
    for path, text in texts.items():
        io.write_atomic(path, text, audited=audited)
    if options["as_json"]:
        write_stdout(io.to_json(report))
    elif not options["quiet"]:
        render(report, stdout_console())


def rerender(path: str, options: dict[str, Any]) -> int:
    options = {**options, **writable_outputs(options, {"the saved report": path})}
    report = io.read_report(path)
    show_report(report, options, audited=False)
    return report.verdict.exit_code


def show_cache(folder: str | None) -> int:
    from ..evidence.cache import FILE_NAME, TAG_NAME, EvidenceCache, cache_folder, is_cache

    console = stdout_console(soft_wrap=True)
    where = cache_folder(folder)
    if not where.exists():  # looking must not create it (a file there is said below)
        _not_under_a_file(folder, where)
        console.print(escape(f"cache: {where} (nothing stored yet)"))
        return 0
    if where.is_dir() and not is_cache(where):
        console.print(escape(f"cache: {where} (no contamcheck cache here: no {FILE_NAME}, no {TAG_NAME})"))
        return 0
    summary = EvidenceCache.inspect(folder)  # read only: looking changes nothing
    total = summary["bytes"] + summary["converted"]["bytes"] + summary["nulls"]["bytes"]
    console.print(escape(f"cache: {where} ({_mib(total)} in all)"))
    console.print(escape(f"  evidence: {summary['path']} ({_mib(summary['bytes'])})"))
    if "unreadable" in summary:
        console.print(
            escape(
                f"    unreadable ({summary['unreadable']}): the next audit moves it aside and starts a new "
                "one; `contamcheck cache clear` deletes it"
            )
        )
    elif "newer" in summary:
        console.print(escape(f"    written by a newer contamcheck ({summary['newer']}): upgrade to read it"))
    elif "not_a_file" in summary:
        console.print(
            escape(
                f"    can't be opened: it is {summary['not_a_file']}, not a regular file (an audit "
                "refuses it). Move it away, or pass --cache with another folder"
            )
        )
    elif "unopened" in summary:
        console.print(escape(f"    can't be opened ({summary['unopened']}): check its owner and permissions"))
    elif not summary["models"]:
        console.print("    no evidence stored")
    if "stale" in summary:
        console.print(escape(f"    (not all: {summary['stale']})"))
    names = Counter(entry["model"] for entry in summary["models"])
    for entry in summary["models"]:
        # one name, several identities (a server's model changed, other settings): tell them apart
        identity, _, settings = entry["namespace"].partition("|")
        which = (
            f" [{identity[:24]}{'…' if len(identity) > 24 else ''}; {settings}]"
            if names[entry["model"]] > 1
            else ""
        )
        unread = (
            f" ({entry['unread']} of them texts another contamcheck version generated, before or since "
            "a fix changed such texts: not read by this one; `contamcheck cache clear --unread` "
            "deletes those of earlier versions)"
            if entry.get("unread")
            else ""
        )
        console.print(escape(f"    {entry['model']}{which}: {entry['entries']} entries{unread}"))
        if entry["also"]:
            console.print(escape(f"      (also audited as {', '.join(entry['also'])})"))
    converted = summary["converted"]
    if converted["count"]:
        console.print(
            f"  models converted from .gguf files: {converted['count']} ({_mib(converted['bytes'])}; "
            "made again when an audit needs one)"
        )
    nulls = summary["nulls"]
    if nulls["count"]:
        console.print(f"  simulated null tables: {nulls['count']} ({_mib(nulls['bytes'])})")
    return 0


def _not_under_a_file(folder: str | None, where: Path) -> None:
    """A cache folder that isn't there because a file stands on its path can't be one (an audit
    refuses it): said so, not "nothing stored"."""
    from ..evidence.cache import cache_remedy, nearest_existing, what_is

    above = nearest_existing(where)
    if not above.is_dir():
        raise InputError(
            f"The cache folder {str(where)!r} can't exist: {str(above)!r} is {what_is(above)}. "
            f"{cache_remedy(folder, audit=False)}"
        )


def clear_cache(folder: str | None, unread: bool = False) -> int:
    from ..evidence.cache import BUSY_TIMEOUT_S, FILE_NAME, TAG_NAME, EvidenceCache, cache_folder, is_cache

    where = cache_folder(folder)
    if not where.exists():
        _not_under_a_file(folder, where)
        stdout_console(soft_wrap=True).print(escape(f"cache: {where} (nothing stored, nothing to clear)"))
        return 0
    if where.is_dir() and not is_cache(where):  # a file there: EvidenceCache says so
        raise InputError(
            f"{str(where)!r} holds no contamcheck cache (no {FILE_NAME}, no {TAG_NAME} of ours): "
            "nothing was deleted. Pass the folder an audit used (--cache), or leave --cache out "
            "for the default one."
        )

    said: list[bool] = []

    def waiting(waiting: bool | None) -> None:
        if waiting and not said:  # heard at each try: said once
            said.append(True)
            Console(soft_wrap=True, stderr=True).print(
                "Waiting for the evidence cache: another process is writing to it "
                f"(up to {BUSY_TIMEOUT_S} s) …"
            )

    cache = EvidenceCache(folder, audit=False, on_wait=waiting)
    if unread:
        return _clear_unread(cache, where)
    removed = cache.clear()
    if cache.set_aside:  # set aside on the way, then cleared with the rest
        Console(soft_wrap=True, stderr=True).print(
            "[yellow]The evidence cache was unreadable (damaged); it was removed with the rest.[/yellow]"
        )
    stdout_console(soft_wrap=True).print(
        escape(
            f"removed {removed['entries']} evidence entr{'y' if removed['entries'] == 1 else 'ies'}, "
            f"and {removed['files']} other file{'' if removed['files'] == 1 else 's'} "
            "(converted models, null tables, damaged caches set aside: "
            f"{_mib(removed['bytes'])}) from {where}"
        )
    )
    return 0


def _clear_unread(cache: EvidenceCache, where: Path) -> int:
    removed = cache.clear_unread()
    for aside in cache.set_aside:  # found damaged on the way: kept aside, as an audit would
        Console(soft_wrap=True, stderr=True).print(
            escape(
                f"The evidence cache was unreadable (damaged); it was moved to {aside}, and a new one "
                "started. `contamcheck cache clear` deletes it."
            ),
            style="yellow",
        )
    stdout_console(soft_wrap=True).print(
        escape(
            f"removed {removed} text{'' if removed == 1 else 's'} an earlier contamcheck version generated "
            f"(not read by this one) from {where}; the rest is kept"
        )
    )
    return 0


def _mib(size: int) -> str:
    return f"{size / 2**20:.1f} MiB"
