"""``migration-evals serve``: the GitHub App's webhook server, job workers and scheduler.

Production runs under gunicorn (several worker processes, each with its own job worker
threads; the database lease keeps exactly one scheduler active). ``--dev`` runs Flask's
own single-process server instead.
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any

from gunicorn.app.base import BaseApplication

from migration_evals.bot.app.service import BotService, build_service
from migration_evals.bot.commands.options import server_settings_from_args
from migration_evals.bot.exits import ExitStatus
from migration_evals.core.settings import CassetteMode, Settings

log = logging.getLogger(__name__)


class _Gunicorn(BaseApplication):  # type: ignore[misc]
    """gunicorn, configured in code; each worker builds and starts its own service."""

    def __init__(
        self, settings: Settings, options: dict[str, Any], github: CassetteMode | None
    ) -> None:
        self.settings = settings
        self.options = options
        self.github = github
        self.service: BotService | None = None
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self) -> Any:
        self.service = build_service(self.settings, github_mode=self.github)
        self.service.start()
        return self.service.app


def startup_line(service: BotService) -> str:
    """What the server grades with, said once at start (and on ``/healthz``)."""
    about = service.about
    adapters = ", ".join(f"{port}: {name}" for port, name in about["adapters"].items())
    return f"migration-evals serve: grading {about['mode']} ({adapters})"


def run(args: argparse.Namespace) -> int:
    settings = server_settings_from_args(args)
    github = CassetteMode(args.github) if args.github else None  # None: --mode's
    if args.dev:
        service = build_service(settings, github_mode=github)
        print(startup_line(service), file=sys.stderr)
        service.start()
        try:
            service.app.run(host=args.host, port=args.port, threaded=True, use_reloader=False)
        finally:
            service.stop()
        return ExitStatus.OK
    # Fail fast on bad settings, before forking.
    checked = build_service(settings, github_mode=github)
    print(startup_line(checked), file=sys.stderr)
    checked.store.close()
    options = {
        "bind": f"{args.host}:{args.port}",
        "workers": args.processes,
        "worker_class": "gthread",
        "threads": args.request_threads,
        "accesslog": "-" if args.verbose else None,
        "timeout": 60,
        "graceful_timeout": 30,
        "forwarded_allow_ips": "127.0.0.1,::1",
    }
    _Gunicorn(settings, options, github).run()
    return ExitStatus.OK
