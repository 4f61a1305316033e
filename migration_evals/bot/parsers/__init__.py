"""The command line's parsers: one module per command, each exposing ``add_parser``.

A parser names its handler (``Handler``) instead of importing it, and these modules
import nothing heavier than ``argparse`` and the option helpers: building a parser, for
``--help`` or to report a mistyped flag, loads none of SQLAlchemy, the Docker SDK, the
LLM clients, Flask or the plotting stack. What each command does is in
``migration_evals.bot.commands``; its module is imported when the command runs.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from importlib import import_module
from typing import TypeAlias

__all__ = ["Handler", "SubParsers"]

SubParsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


@dataclass(frozen=True)
class Handler:
    """The function ``module.function`` that runs a command, imported on the call."""

    module: str
    function: str

    def __call__(self, args: argparse.Namespace) -> int:
        handler = getattr(import_module(self.module), self.function)
        code: int = handler(args)
        return code
