"""One-step registration: GitHub's manifest flow, served by the App.

``GET /register`` shows one button that posts the manifest (``migration_evals.bot.app.manifest``,
with this App's URLs filled in) to GitHub's "new GitHub App" page, for a user account or an
organisation. GitHub creates the App and sends the browser back to
``GET /register/callback?code=…&state=…``, where the code is exchanged
(``POST /app-manifests/{code}/conversions``) for the App's id, webhook secret and private
key. They are written to a folder, readable by this user only: ``app.pem`` and
``app.env`` (the ``MIGRATION_EVALS_*`` variables ``serve`` reads); nothing secret is shown
in the browser. ``state`` is signed and expires, so only a flow this server started is
completed.

``migration-evals register`` serves these routes until the App is registered. A running
App (already registered) answers both routes with a page saying so, instead of a 404.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any

import requests
from flask import Flask, Response, request

from migration_evals.bot.app.manifest import REGISTER_CALLBACK
from migration_evals.core.errors import InfrastructureError

__all__ = [
    "ManifestConversions",
    "Registered",
    "StateTokens",
    "add_registered_notice",
    "add_registration",
    "save_credentials",
]

STATE_TTL_S = 3600.0
_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; form-action https:",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


@dataclass(frozen=True, slots=True)
class Registered:
    """What GitHub returns for a converted manifest (the fields the App keeps)."""

    app_id: int
    slug: str
    name: str
    html_url: str
    webhook_secret: str
    pem: str

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> Registered:
        return cls(
            app_id=int(data["id"]),
            slug=str(data["slug"]),
            name=str(data.get("name") or data["slug"]),
            html_url=str(data.get("html_url") or ""),
            webhook_secret=str(data["webhook_secret"]),
            pem=str(data["pem"]),
        )


class ManifestConversions:
    """``POST /app-manifests/{code}/conversions``: the code GitHub sent back, for the new
    App's credentials (the code is the credential; the call takes no other)."""

    def __init__(self, session: requests.Session, api_url: str, *, timeout_s: float = 30.0):
        self.session = session
        self.api_url = api_url.rstrip("/")
        self.timeout_s = timeout_s

    def convert(self, code: str) -> Registered:
        url = f"{self.api_url}/app-manifests/{code}/conversions"
        try:
            answer = self.session.post(
                url, headers={"Accept": "application/vnd.github+json"}, timeout=self.timeout_s
            )
        except requests.RequestException as exc:
            raise InfrastructureError(f"cannot reach GitHub at {self.api_url}: {exc}") from exc
        if answer.status_code != 201:
            raise InfrastructureError(
                f"GitHub answered {answer.status_code} to the manifest conversion "
                f"({answer.text[:200]}); codes expire after an hour and work once: register again"
            )
        try:
            return Registered.of(answer.json())
        except (ValueError, KeyError, TypeError) as exc:
            raise InfrastructureError(f"GitHub's conversion answer lacks {exc}") from exc


class StateTokens:
    """Signed, expiring ``state`` values: a callback completes only a flow begun here."""

    def __init__(self, key: bytes, clock: Callable[[], float] = time.time) -> None:
        self.key = key
        self.clock = clock

    def _mac(self, body: str) -> str:
        return hmac.new(self.key, body.encode(), hashlib.sha256).hexdigest()

    def make(self) -> str:
        body = f"{secrets.token_hex(8)}.{int(self.clock() + STATE_TTL_S)}"
        return f"{body}.{self._mac(body)}"

    def valid(self, state: str | None) -> bool:
        body, _, mac = (state or "").rpartition(".")
        expiry = body.rpartition(".")[2]
        if not body or not expiry.isdigit() or not hmac.compare_digest(mac, self._mac(body)):
            return False
        return int(expiry) >= self.clock()


def save_credentials(registered: Registered, folder: Path) -> Path:
    """Write ``app.pem`` and ``app.env`` (owner-only) into ``folder``; returns the env file."""
    folder.mkdir(parents=True, exist_ok=True)
    key = folder / "app.pem"
    env = folder / "app.env"
    _write_private(key, registered.pem)
    lines = {
        "MIGRATION_EVALS_APP_ID": str(registered.app_id),
        "MIGRATION_EVALS_APP_SLUG": registered.slug,
        "MIGRATION_EVALS_WEBHOOK_SECRET": registered.webhook_secret,
        "MIGRATION_EVALS_PRIVATE_KEY_PATH": str(key.resolve()),
    }
    _write_private(env, "".join(f"{name}={value}\n" for name, value in lines.items()))
    return env


def _write_private(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.chmod(path, 0o600)  # an existing file keeps its mode through O_CREAT


def _page(title: str, body: str, status: int = 200) -> Response:
    html = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title></head>"
        f'<body style="font-family:system-ui,sans-serif;margin:2rem;max-width:50rem">'
        f"<h1>{escape(title)}</h1>{body}</body></html>"
    )
    return Response(html, status, mimetype="text/html", headers=_HEADERS)


@dataclass(frozen=True)
class _Flow:
    manifest: Mapping[str, Any]
    github_web: str  # https://github.com, or a GitHub Enterprise Server's address
    org: str | None
    conversions: ManifestConversions
    folder: Path
    states: StateTokens
    on_registered: Callable[[Registered, Path], None]

    def target(self) -> str:
        where = f"/organizations/{self.org}" if self.org else ""
        return f"{self.github_web}{where}/settings/apps/new"


def add_registration(
    app: Flask,
    *,
    manifest: Mapping[str, Any],
    github_web: str,
    conversions: ManifestConversions,
    folder: Path,
    states: StateTokens,
    org: str | None = None,
    on_registered: Callable[[Registered, Path], None] = lambda _r, _p: None,
) -> None:
    """Serve the manifest flow on ``app``; credentials are written into ``folder``."""
    flow = _Flow(manifest, github_web.rstrip("/"), org, conversions, folder, states, on_registered)
    app.add_url_rule("/register", "register", lambda: _start(flow))
    app.add_url_rule(REGISTER_CALLBACK, "register_callback", lambda: _callback(flow))


def _start(flow: _Flow) -> Response:
    document = json.dumps(flow.manifest, indent=2)
    permissions = ", ".join(f"{k}: {v}" for k, v in flow.manifest["default_permissions"].items())
    events = ", ".join(flow.manifest["default_events"])
    body = (
        f"<p>This registers <strong>{escape(str(flow.manifest['name']))}</strong> on "
        f"{escape(flow.github_web)}{' for ' + escape(flow.org) if flow.org else ''}, "
        f"with these permissions: {escape(permissions)}; and these events: {escape(events)}. "
        f"Its webhook: <code>{escape(str(flow.manifest['hook_attributes']['url']))}</code>.</p>"
        f'<form method="post" action="{escape(flow.target())}?state={flow.states.make()}">'
        f'<input type="hidden" name="manifest" value="{escape(document)}">'
        '<button type="submit">Create the GitHub App</button></form>'
        f"<details><summary>The manifest</summary><pre>{escape(document)}</pre></details>"
    )
    return _page("Register the migration-evals GitHub App", body)


def _callback(flow: _Flow) -> Response:
    code = request.args.get("code", "")
    if not flow.states.valid(request.args.get("state")):
        return _page(
            "Registration refused",
            "<p>This callback does not come from a registration this server started (its "
            "state is missing, forged or over an hour old). Start again at "
            '<a href="/register">/register</a>.</p>',
            400,
        )
    if not code.isalnum():
        return _page("Registration refused", "<p>GitHub sent no usable code.</p>", 400)
    try:
        registered = flow.conversions.convert(code)
        env = save_credentials(registered, flow.folder)
    except (InfrastructureError, OSError) as exc:
        return _page("Registration failed", f"<p>{escape(str(exc))}</p>", 502)
    flow.on_registered(registered, env)
    install = f"{registered.html_url}/installations/new" if registered.html_url else ""
    body = (
        f"<p>GitHub registered <strong>{escape(registered.name)}</strong> (App id "
        f"{registered.app_id}, slug <code>{escape(registered.slug)}</code>).</p>"
        f"<p>Its private key and webhook secret are in <code>{escape(str(env.parent))}</code> "
        "(<code>app.pem</code>, <code>app.env</code>; readable by this user only). Start "
        f"the App with them: <code>set -a; . {escape(str(env))}; set +a; migration-evals "
        "serve</code>.</p>"
        + (f'<p>Then <a href="{escape(install)}">install it</a> on the repositories to grade, '
           "and add <code>.github/migration-evals.yml</code> to each.</p>" if install else "")
    )  # fmt: skip
    return _page("The App is registered", body)


def add_registered_notice(app: Flask, app_id: int | None) -> None:
    """On a registered App, the manifest flow's routes say so (and how to register another)."""

    def notice() -> Response:
        return _page(
            "This App is registered",
            f"<p>This server runs GitHub App {app_id}. To register another, run "
            "<code>migration-evals register --out FOLDER</code>.</p>",
        )

    app.add_url_rule("/register", "register", notice)
    app.add_url_rule(REGISTER_CALLBACK, "register_callback", notice)
