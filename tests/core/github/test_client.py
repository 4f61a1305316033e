"""The one GitHub client: its error tree, read the same by both callers, and the cassettes
as transports (a recording replays in process; a miss raises, naming the request)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

import pytest

from migration_evals.bot.app.github import GitHubApp
from migration_evals.core.cassette import CassetteLibrary
from migration_evals.core.errors import (
    ChangesetProviderError,
    GitHubCassetteMiss,
    GitHubError,
    GitHubNotFound,
    GitHubRateLimited,
    GitHubUnauthorized,
    GitHubUnavailable,
)
from migration_evals.core.github import (
    GitHubApi,
    GitHubRequest,
    GitHubResponse,
    MockTransport,
    RecordingTransport,
    ReplayingTransport,
    error_for,
)
from migration_evals.miners.github import GitHubProvider
from tests.fake_github import write_app_key
from tests.fakes import FakeClock

NOW = 1_767_225_600.0
API = "https://api.github.com"
REPO = "octocat/Hello-World"
PULL = f"/repos/{REPO}/pulls/1"
TOKEN = "ghs_" + "S" * 36  # token-shaped, so a leak into a cassette would show

# (status, headers, message) -> the error class and the wait it carries.
CASES = [
    (401, {}, "Bad credentials", GitHubUnauthorized, None),
    (403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW) + 99)},
     "API rate limit exceeded", GitHubRateLimited, 100.0),
    (403, {}, "You have exceeded a secondary rate limit", GitHubRateLimited, 60.0),
    (429, {"retry-after": "7"}, "slow down", GitHubRateLimited, 7.0),
    (403, {}, "Resource not accessible by integration", GitHubError, None),
    (404, {}, "Not Found", GitHubNotFound, None),
    (422, {}, "Validation Failed", GitHubError, None),
    (500, {}, "Server Error", GitHubUnavailable, None),
    (502, {"retry-after": "30"}, "Bad gateway", GitHubUnavailable, 30.0),
    (503, {}, "Unavailable", GitHubUnavailable, None),
]  # fmt: skip
IDS = [f"{status}-{message}" for status, _, message, _, _ in CASES]


def _answer(status: int, headers: Mapping[str, str], message: str) -> GitHubResponse:
    return GitHubResponse(status, dict(headers), json.dumps({"message": message}))


@pytest.mark.parametrize(("status", "headers", "message", "kind", "wait"), CASES, ids=IDS)
def test_each_status_is_one_error(
    status: int, headers: dict[str, str], message: str, kind: type[GitHubError], wait: float | None
) -> None:
    error = error_for(GitHubRequest("GET", PULL), _answer(status, headers, message), NOW)
    assert type(error) is kind
    assert error.status == status
    assert message in str(error) and f"GET {PULL}" in str(error)  # what, and which request
    assert getattr(error, "retry_after_s", None) == wait


@pytest.fixture(scope="module")
def app_key(tmp_path_factory: pytest.TempPathFactory) -> str:
    return write_app_key(tmp_path_factory.mktemp("key"))[0].read_text()


def _refusing(status: int, headers: Mapping[str, str], message: str) -> MockTransport:
    """GitHub granting installation tokens, and refusing everything else so."""

    def handle(request: GitHubRequest) -> GitHubResponse:
        if request.path.endswith("/access_tokens"):
            granted = {"token": TOKEN, "expires_at": "2099-01-01T00:00:00Z"}
            return GitHubResponse(201, {}, json.dumps(granted))
        return _answer(status, headers, message)

    return MockTransport(handle)


@pytest.mark.parametrize(("status", "headers", "message", "kind", "wait"), CASES, ids=IDS)
def test_the_app_and_the_miners_read_a_status_alike(
    app_key: str,
    status: int,
    headers: dict[str, str],
    message: str,
    kind: type[GitHubError],
    wait: float | None,
) -> None:
    transport = _refusing(status, headers, message)
    app = GitHubApp(1, app_key, base_url=API, transport=transport, clock=lambda: NOW)
    with pytest.raises(GitHubError) as by_app:
        app.installation(7).pull(REPO, 1)

    clock = FakeClock(datetime.fromtimestamp(NOW, UTC))
    api = GitHubApi(transport, base_url=API, clock=lambda: NOW)
    miner = GitHubProvider(api, clock=clock, max_retries=0)
    with pytest.raises(ChangesetProviderError) as by_miner:
        miner.pull_request(REPO, 1)

    assert type(by_app.value) is kind
    assert type(by_miner.value.__cause__) is kind  # translated at the port, from the same error
    assert clock.slept == []  # no retries were allowed: nothing waited


def test_a_cassette_miss_raises_naming_the_request(tmp_path: Path) -> None:
    replaying = ReplayingTransport(CassetteLibrary(tmp_path), base_url=API)
    api = GitHubApi(replaying, base_url=API, clock=lambda: NOW)
    with pytest.raises(GitHubCassetteMiss, match=f"GET {PULL}: no cassette for this github"):
        api.json("GET", PULL)
    (mark,) = replaying.misses
    assert mark.cassette.startswith(str(tmp_path / "github"))


def test_a_miss_is_never_read_as_an_absent_file(tmp_path: Path, app_key: str) -> None:
    # ``file_text`` reads a 404 as "no such file"; a missing recording must not pass for one.
    replaying = ReplayingTransport(CassetteLibrary(tmp_path), base_url=API)
    app = GitHubApp(1, app_key, base_url=API, transport=replaying, clock=lambda: NOW)
    with pytest.raises(GitHubCassetteMiss):
        app.installation(7).file_text(REPO, ".github/migration-evals.yml", "main")


def test_a_recording_replays_in_order_with_links_under_any_root(tmp_path: Path) -> None:
    upstream = "http://127.0.0.1:9"
    answers = [
        GitHubResponse(403, {"retry-after": "1"}, json.dumps({"message": "slow down"})),
        GitHubResponse(
            200,
            {"link": f'<{upstream}/repos/{REPO}/pulls?page=2>; rel="next"', "set-cookie": "x"},
            json.dumps([{"url": f"{upstream}{PULL}", "token": TOKEN}]),
        ),
    ]
    seen: list[GitHubRequest] = []

    def live(request: GitHubRequest) -> GitHubResponse:
        seen.append(request)
        return answers[len(seen) - 1]

    library = CassetteLibrary(tmp_path)
    recording = RecordingTransport(
        MockTransport(live), library, base_url=upstream, recorded_by="test"
    )
    recorder = GitHubApi(
        recording, base_url=upstream, credentials=lambda: f"token {TOKEN}", clock=lambda: NOW
    )
    with pytest.raises(GitHubRateLimited):
        recorder.send("GET", f"/repos/{REPO}/pulls", params={"state": "all"})
    recorder.send("GET", f"/repos/{REPO}/pulls", params={"state": "all"})
    assert seen[0].authorization == f"token {TOKEN}"
    written = "".join(path.read_text() for path in (tmp_path / "github").glob("*.json"))
    assert TOKEN not in written and upstream not in written and "set-cookie" not in written

    replayer = GitHubApi(ReplayingTransport(library, base_url=API), base_url=API, clock=lambda: NOW)
    with pytest.raises(GitHubRateLimited):
        replayer.send("GET", f"/repos/{REPO}/pulls", params={"state": "all"})
    page = replayer.send("GET", f"/repos/{REPO}/pulls", params={"state": "all"})
    assert page.headers["link"] == f'<{API}/repos/{REPO}/pulls?page=2>; rel="next"'
    assert page.json()[0]["url"] == f"{API}{PULL}"
    again = replayer.send("GET", f"/repos/{REPO}/pulls", params={"state": "all"})
    assert again == page  # further repeats replay the last recording
