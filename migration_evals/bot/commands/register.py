"""``migration-evals register``: serve GitHub's manifest flow until the App is registered.

The page and the callback are ``migration_evals.bot.app.registration``'s; this command only serves
them on a small local server, prints where to open it, and stops once the credentials are
written, saying where they are.
"""

from __future__ import annotations

import argparse
import secrets
import sys
import threading
from pathlib import Path

import requests
from flask import Flask
from werkzeug.serving import make_server

from migration_evals.bot.app.manifest import MANIFEST_PATH, load_manifest, manifest_for, web_url
from migration_evals.bot.app.registration import (
    ManifestConversions,
    Registered,
    StateTokens,
    add_registration,
)
from migration_evals.bot.exits import ExitStatus
from migration_evals.bot.settings import settings_from_env

__all__ = ["registration_app", "run"]


def registration_app(
    args: argparse.Namespace, public_url: str, on_registered: threading.Event
) -> Flask:
    """The Flask app serving the flow as ``args`` ask (for the command, and for tests)."""
    settings = settings_from_env()
    manifest = manifest_for(load_manifest(args.manifest or MANIFEST_PATH), public_url, args.name)
    app = Flask("migration_evals_register")

    def done(registered: Registered, env: Path) -> None:
        print(
            f"registered {registered.name} (App id {registered.app_id}); its credentials are "
            f"in {env} and {env.parent / 'app.pem'}: `set -a; . {env}; set +a; "
            "migration-evals serve`",
            file=sys.stderr,
        )
        on_registered.set()

    add_registration(
        app,
        manifest=manifest,
        github_web=web_url(settings.github_app.api_url),
        conversions=ManifestConversions(requests.Session(), settings.github_app.api_url),
        folder=args.out,
        states=StateTokens(secrets.token_bytes(32)),
        org=args.org,
        on_registered=done,
    )
    return app


def run(args: argparse.Namespace) -> int:
    public_url = (
        args.public_url
        or settings_from_env().github_app.public_url
        or f"http://{args.host}:{args.port}"
    ).rstrip("/")
    registered = threading.Event()
    server = make_server(args.host, args.port, registration_app(args, public_url, registered))
    threading.Thread(target=server.serve_forever, args=(0.1,), daemon=True).start()
    print(f"migration-evals register: open {public_url}/register in a browser", file=sys.stderr)
    try:
        registered.wait()
    finally:
        # Let the callback's page reach the browser before the server goes.
        threading.Event().wait(1.0)
        server.shutdown()
    return ExitStatus.OK
