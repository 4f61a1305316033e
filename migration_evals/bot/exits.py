"""The command line's exit statuses: one condition, one code.

``TABLE`` is the documentation (``migration-evals --help`` prints it; the exit statuses
reference page is generated from it and ``DETAIL``); every command returns a member of
``ExitStatus``. A CI script can tell a mistyped flag (2) from a gate refusal (6) from a
bundle that differs (7). ``--json`` output is printed as usual whatever the status.

With ``--json``, a command that fails still prints one JSON document on stdout: the
error, its exit status and the status's name (``error_document``).

When several conditions hold for one run, the first of these wins: every trial an
infrastructure error (5), every envelope past tier 1 fabricated (15: nothing was graded,
every answer a cassette miss's default), grading crashed on some trial (4), more
infrastructure errors than the gate's ``max_infra_error_rate`` allows (12: ``gate check``
would refuse the results with ``threshold:max_infra_error_rate``), stopped by the
budget (3).
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

__all__ = ["DETAIL", "TABLE", "ExitStatus", "UsageError", "epilog", "error_document"]


class ExitStatus(IntEnum):
    OK = 0
    ERROR = 1
    USAGE = 2  # argparse's own status for a usage error
    BUDGET = 3
    TRIAL_CRASHED = 4
    ALL_INFRA_ERRORS = 5
    GATE_REFUSED = 6
    BUNDLE_DIFFERS = 7
    LEDGER_TAMPERED = 8
    JUDGES_UNRELIABLE = 9
    MINING_INCOMPLETE = 10
    SCHEMA_BEHIND = 11
    INFRA_ERRORS = 12
    CONFIG_INVALID = 13
    ANCHOR_REFUSED = 14
    ALL_FABRICATED = 15
    INTERRUPTED = 130  # Ctrl-C (128 + SIGINT, as shells report it)


TABLE: tuple[tuple[ExitStatus, str], ...] = (
    (ExitStatus.OK, "done: graded, publishable, verified, current"),
    (ExitStatus.ERROR, "the command could not do its job (one line on stderr says why)"),
    (ExitStatus.USAGE, "usage error: a mistyped command or flag, a bad flag value"),
    (ExitStatus.BUDGET, "run stopped by --budget (or refused at the start: forecast over it)"),
    (ExitStatus.TRIAL_CRASHED, "grading crashed on some trial (recorded as an error)"),
    (ExitStatus.ALL_INFRA_ERRORS, "every trial of the run ended in an infrastructure error"),
    (ExitStatus.GATE_REFUSED, "gate check / gate publish refused (the refusals are listed)"),
    (ExitStatus.BUNDLE_DIFFERS, "verify: the bundle differs from what it recomputes"),
    (ExitStatus.LEDGER_TAMPERED, "ledger verify or checkpoint: the chain does not verify"),
    (ExitStatus.JUDGES_UNRELIABLE, "judges reliability: the judge pair is unreliable"),
    (ExitStatus.MINING_INCOMPLETE, "mine: some pull requests could not be read"),
    (ExitStatus.SCHEMA_BEHIND, "the database's schema is behind: run `db upgrade`"),
    (
        ExitStatus.INFRA_ERRORS,
        "run: infrastructure errors above the gate's max_infra_error_rate",
    ),
    (ExitStatus.CONFIG_INVALID, "config check: the file has problems (all are listed)"),
    (
        ExitStatus.ANCHOR_REFUSED,
        "gold import: the anchor does not verify, or its stamps are not the current specs'",
    ),
    (
        ExitStatus.ALL_FABRICATED,
        "run: every envelope past tier 1 is fabricated (cassette misses): nothing was graded",
    ),
    (ExitStatus.INTERRUPTED, "interrupted (Ctrl-C); finished trials are in the ledger"),
)


# When each status is returned, in more words than ``--help`` has room for: the exit
# statuses reference page (``scripts/gen_docs.py``) prints them beside ``TABLE``.
DETAIL: dict[ExitStatus, str] = {
    ExitStatus.ERROR: "an unreadable input file, a spec that fails its schema, a database or "
    "broker that does not answer, retroactive scoring still locked, a resume refused "
    "(other changesets or specs than the run's plan)",
    ExitStatus.USAGE: "a missing argument or a flag value out of range too (argparse's own status)",
    ExitStatus.BUDGET: "the run stopped by `--budget`, or refused before it started because its "
    "forecast is over the budget",
    ExitStatus.TRIAL_CRASHED: "the crash is recorded as an infrastructure error; nothing is lost",
    ExitStatus.ALL_INFRA_ERRORS: "nothing was graded: no engine, no repository, no judge",
    ExitStatus.GATE_REFUSED: "every refusal is listed, with its code",
    ExitStatus.LEDGER_TAMPERED: "`ledger checkpoint` signs nothing over a chain that does not "
    "verify",
    ExitStatus.MINING_INCOMPLETE: "some pull requests or commits could not be read; the rest "
    "were recorded",
    ExitStatus.SCHEMA_BEHIND: "a server database is upgraded only by `migration-evals db upgrade`",
    ExitStatus.INFRA_ERRORS: "the run ends with a warning naming the commonest causes; `gate "
    "check` would refuse the results (status 6, refusal `threshold:max_infra_error_rate`)",
    ExitStatus.CONFIG_INVALID: "`config check`: every problem is listed",
    ExitStatus.ANCHOR_REFUSED: "refused, nothing imported",
}


class UsageError(Exception):
    """A flag's value is unusable; reported like argparse's own errors, status 2."""


def error_document(status: ExitStatus, message: str) -> dict[str, Any]:
    """What ``--json`` prints on stdout when a command fails: the one line stderr says,
    the exit status and its name, so a script reads the outcome from either."""
    return {"error": message, "exit_status": int(status), "status": status.name.lower()}


def epilog() -> str:
    """The table, for ``--help``."""
    rows = "\n".join(f"  {status.value:>3}  {text}" for status, text in TABLE)
    return f"exit statuses:\n{rows}"
