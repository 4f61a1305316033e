"""One-step registration: the manifest flow's page, GitHub's redirect back, the code
exchanged for the App's credentials, and an App that starts with them."""

from __future__ import annotations

import argparse
import html
import json
import re
import stat
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from flask.testing import FlaskClient

from migration_evals.bot.app.manifest import required_permissions
from migration_evals.bot.app.service import build_service
from migration_evals.bot.commands.register import registration_app
from migration_evals.bot.settings import settings_from_env
from migration_evals.core.settings import CassetteMode
from tests.bot.app.conftest import APP_ID, Harness
from tests.fake_github import FakeGitHub

PUBLIC = "https://evals.example.com"


@pytest.fixture
def github(app_key: tuple[Path, str], monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitHub]:
    fake = FakeGitHub(app_id=APP_ID, public_key=app_key[1])
    monkeypatch.setenv("MIGRATION_EVALS_GITHUB_API_URL", fake.start())
    yield fake
    fake.stop()


@pytest.fixture
def register(
    github: FakeGitHub, tmp_path: Path
) -> Callable[..., tuple[FlaskClient, threading.Event]]:
    def start(**options: Any) -> tuple[FlaskClient, threading.Event]:
        given = {"out": tmp_path / "creds", "org": None, "name": None, "manifest": None}
        args = argparse.Namespace(**{**given, **options})
        done = threading.Event()
        return registration_app(args, PUBLIC, done).test_client(), done

    return start


def _form(client: FlaskClient) -> tuple[str, dict[str, Any], str]:
    page = client.get("/register")
    assert page.status_code == 200 and page.mimetype == "text/html"
    text = page.get_data(as_text=True)
    [action] = re.findall(r'<form method="post" action="([^"]+)"', text)
    [manifest] = re.findall(r'name="manifest" value="([^"]+)"', text)
    action = html.unescape(action)
    [state] = parse_qs(urlsplit(action).query)["state"]
    return action, json.loads(html.unescape(manifest)), state


def _converted(app_key: tuple[Path, str]) -> dict[str, Any]:
    return {
        "id": APP_ID,
        "slug": "evals-test",
        "name": "evals test",
        "html_url": "https://github.com/apps/evals-test",
        "webhook_secret": "whsec-from-github",
        "pem": app_key[0].read_text(),
        "client_id": "Iv1.x",
        "client_secret": "not kept",
    }


def test_the_page_posts_the_manifest_with_this_apps_urls(
    register: Callable[..., tuple[FlaskClient, threading.Event]], github: FakeGitHub
) -> None:
    client, _ = register()
    action, manifest, _state = _form(client)
    web = f"http://127.0.0.1:{github._port}"  # a GitHub Enterprise Server's own address
    assert action.startswith(f"{web}/settings/apps/new?state=")
    assert manifest["hook_attributes"]["url"] == f"{PUBLIC}/webhook"
    assert manifest["redirect_url"] == f"{PUBLIC}/register/callback"
    assert manifest["default_permissions"] == required_permissions()
    org_client, _ = register(org="acme")
    assert _form(org_client)[0].startswith(f"{web}/organizations/acme/settings/apps/new?")


def test_the_callback_exchanges_the_code_and_the_app_starts_with_what_it_kept(
    register: Callable[..., tuple[FlaskClient, threading.Event]],
    github: FakeGitHub,
    app_key: tuple[Path, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    client, done = register()
    _, _, state = _form(client)
    github.conversions["code123"] = _converted(app_key)
    page = client.get(f"/register/callback?code=code123&state={state}")
    text = page.get_data(as_text=True)
    assert page.status_code == 200 and "GitHub registered <strong>evals test</strong>" in text
    assert "whsec-from-github" not in text and "PRIVATE KEY" not in text  # nothing secret shown
    assert "https://github.com/apps/evals-test/installations/new" in text
    assert done.is_set()
    folder = tmp_path / "creds"
    for name in ("app.pem", "app.env"):
        assert stat.S_IMODE((folder / name).stat().st_mode) == 0o600
    assert [c.route for c in github.calls] == ["/app-manifests/{code}/conversions"]
    # The App starts from those files alone.
    for line in (folder / "app.env").read_text().splitlines():
        name, _, value = line.partition("=")
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("MIGRATION_EVALS_DB_URL", f"sqlite:///{tmp_path / 'app.db'}")
    monkeypatch.setenv("MIGRATION_EVALS_MODE", "replay")
    monkeypatch.setenv("MIGRATION_EVALS_BOT_WORKERS", "0")
    monkeypatch.setenv("MIGRATION_EVALS_SCHEDULER", "off")
    service = build_service(settings_from_env(), github_mode=CassetteMode.LIVE)
    try:
        assert (
            service.github.app_id == APP_ID and service.settings.github_app.app_slug == "evals-test"
        )
        assert service.app.test_client().get("/healthz").get_json()["checks"]["github"] == "ok"
    finally:
        service.stop()
    # A code works once.
    again = client.get(f"/register/callback?code=code123&state={state}")
    assert again.status_code == 502 and "register again" in again.get_data(as_text=True)


def test_a_callback_this_server_did_not_start_is_refused(
    register: Callable[..., tuple[FlaskClient, threading.Event]],
    github: FakeGitHub,
    app_key: tuple[Path, str],
) -> None:
    client, done = register()
    github.conversions["code123"] = _converted(app_key)
    for state in ("", "1.2.3", "abc.99999999999.deadbeef"):
        assert client.get(f"/register/callback?code=code123&state={state}").status_code == 400
    assert not done.is_set() and github.calls == []


def test_a_registered_app_answers_the_flows_routes(harness: Harness) -> None:
    for path in ("/register", "/register/callback?code=x&state=y"):
        page = harness.client.get(path)
        assert page.status_code == 200
        assert f"This server runs GitHub App {APP_ID}" in page.get_data(as_text=True)
