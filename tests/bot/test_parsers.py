"""The command line's parsers: cheap to build, and every handler they name exists."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Iterator
from importlib import import_module

from migration_evals.bot.app.repo_config import CONFIG_PATH
from migration_evals.bot.cli import build_parser
from migration_evals.bot.commands import COMMANDS
from migration_evals.bot.parsers import Handler
from migration_evals.bot.parsers import config as config_parser
from tests.conftest import ROOT

# What ``--help`` must never load: the libraries behind the handlers, and the packages
# below ``bot`` but ``core`` (whose leaf modules the parsers use for option choices).
HEAVY = (
    "sqlalchemy",
    "alembic",
    "docker",
    "requests",
    "anthropic",
    "openai",
    "flask",
    "gunicorn",
    "celery",
    "github",
    "jinja2",
    "jsonschema",
    "matplotlib",
    "scipy",
    "rich",
    "oracles",
    "gate",
    "miners",
)

# Every command's help, then every subcommand's, in one fresh interpreter; it prints the
# top-level packages it holds afterwards and which of migration_evals.bot.commands' modules.
_PROBE = """
import contextlib, io, json, sys
from migration_evals.bot.cli import main
from migration_evals.bot.commands import COMMANDS
lines = [[name] for name in COMMANDS] + [[name, action] for name, action in ACTIONS]
for argv in lines:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
        main([*argv, "--help"])
print(json.dumps({
    "packages": sorted({module.split(".")[0] for module in sys.modules}),
    "commands": sorted(m for m in sys.modules if m.startswith("migration_evals.bot.commands.")),
}))
"""


def _parsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                yield from _parsers(child)


def _actions() -> list[tuple[str, str]]:
    """(command, action) for each command with actions (``gate check``, ``db status``)."""
    found = []
    for name in COMMANDS:
        for parser in _parsers(build_parser([name])):
            words = parser.prog.split()[1:]
            if len(words) == 2:
                found.append((words[0], words[1]))
    return found


def test_help_loads_no_handler_and_no_heavy_library() -> None:
    probe = f"ACTIONS = {_actions()!r}\n{_PROBE}"
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    loaded = json.loads(done.stdout)
    assert set(HEAVY) & set(loaded["packages"]) == set()
    assert loaded["commands"] == ["migration_evals.bot.commands.options"]


def test_every_handler_a_parser_names_exists() -> None:
    handlers = [
        parser.get_default("handler")
        for name in COMMANDS
        for parser in _parsers(build_parser([name]))
        if parser.get_default("handler") is not None
    ]
    assert len(handlers) >= len(COMMANDS)
    for handler in handlers:
        assert isinstance(handler, Handler)
        assert callable(getattr(import_module(handler.module), handler.function)), handler


def test_the_config_parser_names_the_apps_config_path() -> None:
    assert config_parser.CONFIG_PATH == CONFIG_PATH


def test_run_help_reads_no_environment_and_sets_up_no_logging() -> None:
    # `run --help` is typed often: the environment's settings and logging are needed only
    # once a command runs, JSON and the nearest-match search only when asked for or when
    # a line is mistyped.
    probe = (
        "import contextlib, io, sys\n"
        "from migration_evals.bot.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "    main(['run', '--help'])\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    loaded = set(done.stdout.split())
    assert (
        "migration_evals.bot.parsers.run" in loaded
    )  # the probe did build the run command's parser
    assert loaded & {"migration_evals.bot.settings", "logging", "json", "difflib"} == set()
