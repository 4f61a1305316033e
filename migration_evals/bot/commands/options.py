"""Command-line options shared by the commands, and the settings they resolve to.

Kept apart from the grading plumbing (``migration_evals.bot.commands.common``) so that commands
which only read options do not import the cascade, the executor and their libraries.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from migration_evals.bot.exits import UsageError
from migration_evals.core.errors import ConfigError
from migration_evals.core.settings import CassetteMode, Executor, ScaleSettings, Settings

__all__ = [
    "DB_HELP",
    "add_db_option",
    "add_deprecated_alias",
    "add_executor_options",
    "add_grading_options",
    "add_server_mode_option",
    "add_specs_option",
    "add_store_options",
    "add_trials_option",
    "budget_usd",
    "database_url",
    "server_settings_from_args",
    "settings_from_args",
]


class _Deprecated(argparse.Action):
    """An old spelling of an option: it still works, and says on stderr what to write
    instead (hidden from ``--help``, which lists the new spelling only)."""

    def __init__(self, option_strings: list[str], dest: str, *, instead: str, **kw: Any) -> None:
        super().__init__(option_strings, dest, **kw)
        self.instead = instead

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        print(
            f"{parser.prog}: warning: {option_string} is deprecated and will be removed; "
            f"write {self.instead}",
            file=sys.stderr,
        )
        setattr(namespace, self.dest, values)


def add_deprecated_alias(
    parser: argparse.ArgumentParser, *flags: str, dest: str, instead: str, kind: type = int
) -> None:
    """``flags``: old spellings of the option whose value lands in ``dest`` (``instead``:
    how to write it now)."""
    parser.add_argument(
        *flags,
        dest=dest,
        type=kind,
        action=_Deprecated,
        instead=instead,
        default=argparse.SUPPRESS,
        help=argparse.SUPPRESS,
    )


def add_specs_option(parser: argparse.ArgumentParser) -> None:
    """``--specs`` alone, for commands that read the specs but no database."""
    parser.add_argument("--specs", metavar="DIR", type=Path, help="specs directory")


DB_HELP = (
    "SQLAlchemy database URL, or the path of a SQLite file "
    "(default: $MIGRATION_EVALS_DB_URL or sqlite:///./migration-evals.db)"
)


_URL = re.compile(r"[A-Za-z][\w+.-]*://")


def database_url(value: str) -> str:
    """``--db``'s value as a SQLAlchemy URL: a URL as given, a bare path (``results.db``)
    as the SQLite file it names. Something in between (``sqlite:results.db``) is neither,
    and is refused with the form a URL takes."""
    if _URL.match(value):
        return value
    if ":" in value or not value.strip():
        raise argparse.ArgumentTypeError(
            f"{value!r} is neither a database URL nor a file path: give a SQLite file "
            "(results.db, or sqlite:///results.db) or a URL such as "
            "postgresql://USER@HOST/NAME"
        )
    return f"sqlite:///{value}"


def add_db_option(parser: argparse.ArgumentParser) -> None:
    """``--db`` alone, for commands that read the database but no spec."""
    parser.add_argument("--db", metavar="URL", type=database_url, help=DB_HELP)


def budget_usd(value: str) -> float:
    """``--budget``'s value: a finite number of dollars, zero or more (``nan`` and ``inf``
    parse as floats but bound nothing, and a negative budget could never be met)."""
    try:
        amount = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of dollars: {value!r}") from None
    if not math.isfinite(amount) or amount < 0:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a budget: give a finite number of dollars, 0 or more"
        )
    return amount


def add_store_options(parser: argparse.ArgumentParser) -> None:
    add_db_option(parser)
    add_specs_option(parser)


def add_trials_option(parser: argparse.ArgumentParser) -> None:
    """``--trials``, for the commands that print a run's summary."""
    parser.add_argument(
        "--trials",
        action="store_true",
        help="also print one row per trial, after the funnel and the per-model pass rates",
    )


def add_grading_options(parser: argparse.ArgumentParser) -> None:
    add_store_options(parser)
    parser.add_argument(
        "--jobs", "-j", type=int, metavar="N", help="trials graded in parallel (default: 1)"
    )
    parser.add_argument("--cassettes", metavar="DIR", type=Path, help="cassette directory")
    parser.add_argument(
        "--mode",
        choices=[m.value for m in CassetteMode],
        help="replay cassettes (default), record them from live adapters, or go live",
    )
    parser.add_argument(
        "--sandbox",
        choices=[m.value for m in CassetteMode],
        help="the sandbox port's mode alone (default: --mode's); e.g. record sandbox "
        "cassettes from the Docker engine while the judges replay",
    )
    parser.add_argument(
        "--budget",
        type=budget_usd,
        metavar="USD",
        help="refuse to start if the forecast exceeds USD; stop before spending more",
    )
    parser.add_argument(
        "--strict", action="store_true", help="two judges (Claude and non-Claude) must agree"
    )
    parser.add_argument("--cache-dir", type=Path, metavar="DIR", help="clone and snapshot cache")
    parser.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    parser.add_argument(
        "--out", type=Path, metavar="FILE", help="also write that JSON document to FILE"
    )


def _sandbox_mode(args: argparse.Namespace) -> CassetteMode | None:
    """``--sandbox`` when given, else ``--mode`` (which sets every port), else unset."""
    chosen = getattr(args, "sandbox", None) or getattr(args, "mode", None)
    return CassetteMode(chosen) if chosen else None


def add_executor_options(parser: argparse.ArgumentParser, *, executor: bool = True) -> None:
    if executor:
        parser.add_argument(
            "--executor",
            choices=[e.value for e in Executor],
            help="grade in this process (embedded, the default) or on Celery workers "
            "(default: $MIGRATION_EVALS_EXECUTOR or embedded)",
        )
    parser.add_argument(
        "--broker",
        metavar="URL",
        help="Celery broker URL (default: $MIGRATION_EVALS_BROKER_URL or redis://127.0.0.1:6379/0)",
    )


def _scale_overrides(args: argparse.Namespace, scale: ScaleSettings) -> ScaleSettings:
    changes: dict[str, Any] = {}
    if getattr(args, "executor", None):
        changes["executor"] = Executor(args.executor)
    if getattr(args, "broker", None):
        changes["broker_url"] = args.broker
    return replace(scale, **changes)


def settings_from_args(args: argparse.Namespace) -> Settings:
    # Imported here: building a parser (``--help``) needs no environment, and reading
    # one pulls in most of the settings' modules.
    from migration_evals.bot.settings import settings_from_env  # noqa: PLC0415

    settings = settings_from_env()
    overrides: dict[str, Any] = {
        "db_url": getattr(args, "db", None),
        "specs_dir": getattr(args, "specs", None),
        "cassette_dir": getattr(args, "cassettes", None),
        "cache_dir": getattr(args, "cache_dir", None),
        "jobs": getattr(args, "jobs", None),
        "budget_usd": getattr(args, "budget", None),
        "mode": CassetteMode(args.mode) if getattr(args, "mode", None) else None,
        "sandbox_mode": _sandbox_mode(args),
        "strict_judge": True if getattr(args, "strict", False) else None,
        "scale": _scale_overrides(args, settings.scale),
    }
    if overrides["jobs"] is not None and overrides["jobs"] < 1:
        raise UsageError("--jobs must be at least 1")
    return settings.with_overrides(**{k: v for k, v in overrides.items() if v is not None})


def add_server_mode_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--mode",
        choices=[m.value for m in CassetteMode],
        help="live adapters (the default: a server posts real results), record, or replay "
        "cassettes (every check run then says so); default: $MIGRATION_EVALS_MODE or live",
    )


def server_settings_from_args(args: argparse.Namespace) -> Settings:
    """Settings for ``serve`` and ``worker``: live unless a mode is asked for, so that a
    production server never replays cassettes by default."""
    from migration_evals.bot.settings import mode_is_set  # noqa: PLC0415 - see settings_from_args

    settings = settings_from_args(args)
    if getattr(args, "mode", None) or mode_is_set():
        return settings
    return settings.with_overrides(mode=CassetteMode.LIVE)


def read_json_object(path: Path, *, name: str, kind: str) -> dict[str, Any]:
    """The JSON object a command was given in ``path``: ``name`` says what could not be
    read, ``kind`` what the file should have been."""
    import json  # noqa: PLC0415 - see settings_from_args

    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read {name} {path}: {exc}") from exc
    if not isinstance(document, dict):
        raise ConfigError(f"{path} is not a {kind} (not a JSON object)")
    return document
