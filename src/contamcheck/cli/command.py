"""An audit's settings as the command that runs it: what the web UI shows beside a job, so the same
audit can be run from a shell or a CI job (a test reads the command back through the CLI's own
parser and gets the same :class:`~contamcheck.config.AuditConfig`)."""

from __future__ import annotations

import dataclasses
import shlex

from ..config import AuditConfig, option_name

# the CLI's commands (a test keeps this in step with them): a MODEL of one of these names, or one
# that starts with a dash, is written in the long form, where it can't be taken for anything else
COMMANDS = ("audit", "benchmarks", "cache", "report", "run", "serve")

# fields written as a flag and a value, in the order of `contamcheck run --help`, then switches
VALUED = (
    "field", "limit", "seed", "control", "control_field", "reference", "k", "alpha", "permutations",
    "fail_on", "twins", "batch_size", "device", "dtype", "threads", "cache", "order_shards",
    "order_permutations",
)  # fmt: skip
SWITCHES = ("quick", "twinless", "trust_remote_code")


def flag(field: str) -> str:
    """The option that sets ``field``, as a command writes it (``-n``, not ``-n/--limit``)."""
    return "-n" if field == "limit" else option_name(field)


def command_line(config: AuditConfig, program: str = "contamcheck") -> str:
    """The shell command that runs ``config``'s audit: MODEL, BENCHMARK and every setting that is
    not its default, quoted for a POSIX shell."""
    defaults = {f.name: f.default for f in dataclasses.fields(AuditConfig)}
    words = [program]
    if config.model in COMMANDS or config.model.startswith("-") or config.benchmark.startswith("-"):
        words += ["run", "--model", config.model, "--benchmark", config.benchmark]
    else:
        words += [config.model, config.benchmark]
    for name in VALUED:
        value = getattr(config, name)
        if value != defaults[name]:
            words += [flag(name), str(value)]
    if config.tests:
        words += ["--tests", ",".join(config.tests)]
    words += [flag(name) for name in SWITCHES if getattr(config, name)]
    if not config.ordered:
        words.append("--no-order")
    if config.no_cache:
        words.append("--no-cache")
    return shlex.join(words)
