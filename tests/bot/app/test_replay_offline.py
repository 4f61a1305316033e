"""``serve --mode replay`` is offline: GitHub is answered from cassettes, as the sandbox and
the judges are. The cassettes are recorded by ``--mode record`` against the fake GitHub;
then, with that GitHub gone and every connection refused, a replaying App takes the same
webhook and grades and publishes it from the recordings."""

from __future__ import annotations

import socket
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from migration_evals.bot.app.service import BotService, build_service
from migration_evals.bot.app.signature import sign
from migration_evals.core.github import RecordingTransport, ReplayingTransport
from migration_evals.core.settings import (
    CassetteMode,
    Executor,
    GitHubAppSettings,
    ScaleSettings,
    Settings,
)
from tests.bot.app.conftest import (
    APP_ID,
    CONFIG,
    INSTALLATION,
    JAVA_BASE,
    PATCHES,
    REPO,
    SECRET,
    pull_data,
    raw,
)
from tests.conftest import ROOT, SPECS_DIR
from tests.fake_github import FakeGitHub, FakePull


@pytest.fixture
def github(app_key: tuple[Path, str]) -> Iterator[FakeGitHub]:
    fake = FakeGitHub(app_id=APP_ID, public_key=app_key[1])
    fake.start()
    fake.files[(REPO, ".github/migration-evals.yml")] = CONFIG
    pull = FakePull(pull_data(), (PATCHES / "good.diff").read_text(), JAVA_BASE)
    fake.add_pull(pull, installation=INSTALLATION)
    yield fake
    fake.stop()


@pytest.fixture
def cassettes(tmp_path: Path) -> Path:
    """The repository's sandbox and judge cassettes, and a GitHub folder of this test's own."""
    folder = tmp_path / "cassettes"
    folder.mkdir()
    for port in ("sandbox", "judge"):
        (folder / port).symlink_to(ROOT / "cassettes" / port)
    return folder


@pytest.fixture
def serve(
    tmp_path: Path, app_key: tuple[Path, str], repo_cache: Path, cassettes: Path
) -> Iterator[Callable[..., BotService]]:
    made: list[BotService] = []

    def build(api_url: str, *, github_mode: CassetteMode | None = None) -> BotService:
        settings = Settings(
            specs_dir=SPECS_DIR,
            cassette_dir=cassettes,
            cache_dir=repo_cache,
            db_url=f"sqlite:///{tmp_path / f'app{len(made)}.db'}",
            mode=CassetteMode.REPLAY,
            github_app=GitHubAppSettings(
                app_id=APP_ID,
                private_key_path=app_key[0],
                webhook_secret=SECRET,
                api_url=api_url,
                workers=0,
                scheduler=False,
                write_interval_s=0.0,
            ),
            scale=ScaleSettings(executor=Executor.EMBEDDED),
        )
        service = build_service(settings, github_mode=github_mode)
        made.append(service)
        return service

    yield build
    for service in made:
        service.stop()


def _grade_opened(service: BotService) -> list[str]:
    body = raw("pull_request/opened.payload.json")
    headers = {
        "X-GitHub-Event": "pull_request",
        "X-GitHub-Delivery": str(uuid.uuid4()),
        "X-Hub-Signature-256": sign(SECRET, body),
        "Content-Type": "application/json",
    }
    assert service.app.test_client().post("/webhook", data=body, headers=headers).status_code == 202
    while service.workers.run_one("test-worker"):
        pass
    return [str(job["result"]) for job in service.queue.admin.jobs() if job["kind"] == "grade"]


@pytest.fixture
def network(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Refuses every connection but to the loopback ports the test allows."""
    guard: dict[str, Any] = {"ports": set(), "refused": []}
    connect = socket.socket.connect

    def guarded(self: socket.socket, address: Any) -> Any:
        if not (isinstance(address, tuple) and address[0] == "127.0.0.1"):
            guard["refused"].append(address)
            raise OSError(f"network refused by the test: {address}")
        if address[1] not in guard["ports"]:
            guard["refused"].append(address)
            raise OSError(f"network refused by the test: {address}")
        return connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    return guard


def test_serve_replay_answers_github_from_cassettes_with_no_network(
    serve: Callable[..., BotService],
    github: FakeGitHub,
    cassettes: Path,
    network: dict[str, Any],
) -> None:
    recorder = serve(f"http://127.0.0.1:{github._port}", github_mode=CassetteMode.RECORD)
    assert isinstance(recorder.github_cassettes, RecordingTransport)
    network["ports"] = {github._port}
    [recorded] = _grade_opened(recorder)
    assert recorded.startswith(("success:", "neutral:")), recorded
    recorder.stop()
    assert len(list((cassettes / "github").iterdir())) >= 6
    [run] = github.check_runs
    assert run["status"] == "completed"

    github.stop()  # GitHub is gone; only the replaying App's cassettes answer
    calls = len(github.calls)
    replayer = serve("https://api.github.invalid")
    assert replayer.about["adapters"]["github"] == "GitHub cassettes (no network)"
    assert replayer.about["modes"]["github"] == "replay"
    assert isinstance(replayer.github_cassettes, ReplayingTransport)
    network["ports"] = set()  # the cassettes are read in process: no connection at all
    [replayed] = _grade_opened(replayer)
    assert replayed == recorded  # the same verdict, published through the recordings
    assert network["refused"] == [] and replayer.github_cassettes.misses == []
    assert len(github.calls) == calls
    health = replayer.app.test_client().get("/healthz").get_json()
    assert "github" not in health["checks"]  # nothing live to ask
