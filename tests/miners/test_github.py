"""The GitHub provider over the one GitHub client, recorded through the recording transport
and replayed offline by the replaying transport.

The upstream is ``tests/miners/github_upstream.py`` (GitHub's own example response, Link
pagination, rate-limit answers), reached over real HTTP by the live transport; replay
runs with it shut down, so nothing but the cassettes answers.
"""

from __future__ import annotations

import json
import socket
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from migration_evals.core.cassette import CassetteLibrary
from migration_evals.core.errors import ChangesetProviderError
from migration_evals.core.github import GitHubApi, RecordingTransport, ReplayingTransport, Transport
from migration_evals.core.github.live import PyGithubTransport
from migration_evals.core.ports import PullRequestInfo, PullRequestQuery
from migration_evals.miners.github import GitHubProvider, search_queries
from tests.fakes import FakeClock
from tests.miners.github_upstream import (
    EXAMPLE_API,
    EXAMPLE_REPO,
    RESET_AT,
    TOKEN,
    FakeGitHub,
    canonical,
    sample_repo,
)

FIXTURE_CASSETTES = Path(__file__).resolve().parents[1] / "fixtures" / "github" / "cassettes"
LIST = PullRequestQuery(repos=(EXAMPLE_REPO,))
PAGE_2 = f"/repos/{EXAMPLE_REPO}/pulls?state=all&sort=created&direction=asc&per_page=2&page=2"
NOW = datetime.fromtimestamp(RESET_AT - 30, UTC)


def api(
    transport: Transport, base_url: str, clock: FakeClock, token: str | None = TOKEN
) -> GitHubApi:
    """The client, reading limits' resets against the provider's clock."""
    return GitHubApi(
        transport,
        base_url=base_url,
        credentials=lambda: f"token {token}" if token else None,
        clock=lambda: clock.now().timestamp(),
    )


def provider(transport: Transport, base_url: str, clock: FakeClock | None = None) -> GitHubProvider:
    clock = clock or FakeClock(NOW)
    return GitHubProvider(
        api(transport, base_url, clock),
        clock=clock,
        agent_authors={"agent-bot": "gpt-5"},
        per_page=2,
    )


def recording(library: CassetteLibrary, upstream: FakeGitHub) -> RecordingTransport:
    return RecordingTransport(
        PyGithubTransport(upstream.base_url),
        library,
        base_url=upstream.base_url,
        recorded_by="test",
    )


def recorded(
    library: CassetteLibrary, upstream: FakeGitHub, clock: FakeClock | None = None
) -> GitHubProvider:
    return provider(recording(library, upstream), upstream.base_url, clock)


@pytest.fixture
def library(tmp_path: Path) -> CassetteLibrary:
    return CassetteLibrary(tmp_path / "cassettes")


def record(
    library: CassetteLibrary, upstream: FakeGitHub, clock: FakeClock | None = None
) -> tuple[list[PullRequestInfo], FakeClock]:
    clock = clock or FakeClock(NOW)
    return list(recorded(library, upstream, clock).pull_requests(LIST)), clock


def test_record_then_replay_every_page_through_a_rate_limit(library: CassetteLibrary) -> None:
    with FakeGitHub([sample_repo()], rate_limit_once=(PAGE_2,)) as upstream:
        recorded, clock = record(library, upstream)
    assert [p.number for p in recorded] == [1, 2, 3, 4, 5]
    assert clock.slept == [31.0]  # reset in 30 s, plus the second the reset may fall within
    assert sum(canonical(seen.path) == canonical(PAGE_2) for seen in upstream.seen) == 2

    replay_clock = FakeClock(NOW)
    replaying = ReplayingTransport(library, base_url=EXAMPLE_API)  # cassettes only
    replayed = list(provider(replaying, EXAMPLE_API, replay_clock).pull_requests(LIST))
    assert replayed == recorded
    assert replay_clock.slept == [31.0]  # the 403 was recorded and replayed, then the retry
    assert replaying.misses == []


def test_pull_requests_become_full_infos(library: CassetteLibrary) -> None:
    with FakeGitHub([sample_repo()]) as upstream:
        first, second, *_ = record(library, upstream)[0]
    assert first == PullRequestInfo(
        repo=EXAMPLE_REPO,
        number=1,
        title="Upgrade to Java 17",
        url=f"https://github.com/{EXAMPLE_REPO}/pull/1",
        clone_url=f"https://github.com/{EXAMPLE_REPO}.git",
        default_branch="main",
        base_sha="b1" * 20,
        head_sha="a1" * 20,
        author="agent-bot",
        is_agent=True,
        created_at=datetime(2025, 1, 2, 10, tzinfo=UTC),
        repo_created_at=date(2011, 1, 26),
        merged_at=datetime(2025, 1, 3, 10, tzinfo=UTC),
        closed_at=datetime(2025, 1, 3, 10, tzinfo=UTC),
        merge_commit_sha="c1" * 20,
        labels=("java17",),
        branch="new-topic",
        state="closed",
    )
    assert second.author == "octocat" and not second.is_agent
    assert second.closed_unmerged and second.merge_commit_sha is None


def test_cassettes_hold_no_token(library: CassetteLibrary) -> None:
    with FakeGitHub([sample_repo()], rate_limit_once=(PAGE_2,)) as upstream:
        record(library, upstream)
    assert all(seen.headers["authorization"] == f"token {TOKEN}" for seen in upstream.seen)
    for path in (library.root / "github").glob("*.json"):
        text = path.read_text()
        assert TOKEN not in text
        assert "authorization" not in text.lower()
        assert upstream.base_url not in text  # stored as {{base_url}}, replayable anywhere


def test_search_by_label_and_author_one_query_per_author(library: CassetteLibrary) -> None:
    query = PullRequestQuery(labels=("java17",), authors=("agent-bot", "octocat"))
    assert search_queries(query) == [
        "is:pr label:java17 author:agent-bot",
        "is:pr label:java17 author:octocat",
    ]
    with FakeGitHub([sample_repo()]) as upstream:
        found = list(recorded(library, upstream).pull_requests(query))
    assert [(p.number, p.author) for p in found] == [
        (1, "agent-bot"),
        (4, "agent-bot"),
        (2, "octocat"),
    ]
    assert search_queries(PullRequestQuery(repos=("a/b",), labels=("needs review",))) == [
        'is:pr repo:a/b label:"needs review"'
    ]


def test_limit_stops_early(library: CassetteLibrary) -> None:
    with FakeGitHub([sample_repo()]) as upstream:
        query = PullRequestQuery(repos=(EXAMPLE_REPO,), limit=3)
        assert len(list(recorded(library, upstream).pull_requests(query))) == 3
    pages = [s.path for s in upstream.seen if "/pulls?" in s.path]
    assert len(pages) == 2  # the third page was never fetched


def test_the_diff_comes_with_the_diff_media_type(library: CassetteLibrary) -> None:
    with FakeGitHub([sample_repo()]) as upstream:
        diff = recorded(library, upstream).diff(EXAMPLE_REPO, 1)
        empty = recorded(library, upstream).diff(EXAMPLE_REPO, 2)
    assert diff.startswith("diff --git a/pom.xml b/pom.xml\n")
    assert "+17\n" in diff
    assert empty == ""
    assert upstream.seen[0].headers["accept"] == "application/vnd.github.diff"


def test_a_secondary_limit_waits_retry_after(library: CassetteLibrary) -> None:
    path = f"/repos/{EXAMPLE_REPO}/pulls/3"
    with FakeGitHub([sample_repo()], retry_after_once=(path,)) as upstream:
        clock = FakeClock(NOW)
        info = recorded(library, upstream, clock).pull_request(EXAMPLE_REPO, 3)
    assert info.number == 3
    assert clock.slept == [7.0]


def test_a_server_error_is_retried_after_the_shared_backoff() -> None:
    path = f"/repos/{EXAMPLE_REPO}/pulls/3"
    clock = FakeClock(NOW)
    with FakeGitHub([sample_repo()], server_error_once=(path,)) as upstream:
        gh = GitHubProvider(
            api(PyGithubTransport(upstream.base_url), upstream.base_url, clock),
            clock=clock,
            jitter=lambda: 1.0,
        )
        info = gh.pull_request(EXAMPLE_REPO, 3)
    assert info.number == 3
    assert clock.slept == [2.0]  # the first step of the backoff, at full jitter
    assert [seen.path for seen in upstream.seen].count(path) == 2


def test_a_persisting_server_error_is_an_infrastructure_error() -> None:
    clock = FakeClock(NOW)
    with FakeGitHub([sample_repo()]) as upstream:
        upstream.failing = 10
        gh = GitHubProvider(
            api(PyGithubTransport(upstream.base_url), upstream.base_url, clock),
            clock=clock,
            max_retries=2,
            jitter=lambda: 0,
        )
        expected = f"repository {EXAMPLE_REPO}: GitHub answered 502"
        with pytest.raises(ChangesetProviderError, match=expected):
            gh.pull_request(EXAMPLE_REPO, 3)
    assert clock.slept == [1.0, 2.0]  # half the backoff at no jitter, then the third try


def test_a_limit_resetting_beyond_the_longest_wait_is_an_infrastructure_error(
    library: CassetteLibrary,
) -> None:
    early = FakeClock(datetime.fromtimestamp(RESET_AT - 7200, UTC))
    expected = pytest.raises(ChangesetProviderError, match="reset in 7201s, more than the 3600s")
    with FakeGitHub([sample_repo()], rate_limit_once=(PAGE_2,)) as upstream, expected:
        record(library, upstream, early)
    assert early.slept == []


def test_fixture_cassettes_replay_offline_with_pagination_and_rate_limit() -> None:
    clock = FakeClock(NOW)
    replaying = ReplayingTransport(CassetteLibrary(FIXTURE_CASSETTES), base_url=EXAMPLE_API)
    gh = provider(replaying, EXAMPLE_API, clock)
    pulls = list(gh.pull_requests(LIST))
    diff = gh.diff(EXAMPLE_REPO, 1)
    assert [p.number for p in pulls] == [1, 2, 3, 4, 5]
    assert [_state(p) for p in pulls] == ["merged", "closed", "merged", "open", "merged"]
    assert clock.slept == [31.0]
    assert diff.startswith("diff --git")
    assert replaying.misses == []
    recorded = [json.loads(p.read_text()) for p in (FIXTURE_CASSETTES / "github").glob("*.json")]
    assert {r["response"]["status"] for r in recorded} == {200, 403}
    assert all(r["recorded_by"].startswith("hand:") for r in recorded)


def test_a_cassette_miss_is_an_infrastructure_error_naming_the_cassette(
    library: CassetteLibrary,
) -> None:
    expected = pytest.raises(ChangesetProviderError, match="no cassette for this github request")
    replaying = ReplayingTransport(library, base_url=EXAMPLE_API)
    with expected as caught:
        provider(replaying, EXAMPLE_API).pull_request(EXAMPLE_REPO, 1)
    assert f"GET /repos/{EXAMPLE_REPO}" in str(caught.value)  # the request it had no answer to
    (mark,) = replaying.misses
    assert mark.port == "github"
    assert mark.cassette.startswith(str(library.root / "github"))


def test_an_unreachable_api_is_an_infrastructure_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    base_url = f"http://127.0.0.1:{port}"
    with pytest.raises(ChangesetProviderError, match="cannot reach GitHub"):
        provider(PyGithubTransport(base_url), base_url).pull_request(EXAMPLE_REPO, 1)


def test_bad_credentials_are_an_infrastructure_error(library: CassetteLibrary) -> None:
    with FakeGitHub([sample_repo()]) as upstream:
        transport = recording(library, upstream)
        clock = FakeClock(NOW)
        gh = GitHubProvider(api(transport, upstream.base_url, clock, token="wrong"), clock=clock)
        with pytest.raises(ChangesetProviderError, match="401.*Bad credentials"):
            gh.pull_request(EXAMPLE_REPO, 1)


def _state(pull: PullRequestInfo) -> str:
    return "merged" if pull.merged else "closed" if pull.closed_unmerged else "open"
