"""A stand-in for the GitHub API *behind* the recording transport, for recording test cassettes.

It serves the four endpoints the provider uses (repository, pull-request list, one pull
request as JSON or as a diff, issue search) built from GitHub's own example response
(``tests/fixtures/github/pull-request.json``), with ``Link`` pagination, a token check,
and rate-limit answers on request: a primary limit (403, ``X-RateLimit-Remaining: 0``,
``X-RateLimit-Reset``) or a secondary one (429, ``Retry-After``), each once per path.

``python -m tests.miners.github_upstream DIR`` records the committed cassettes under
``DIR/github`` through the client's recording transport.
"""

from __future__ import annotations

import copy
import json
import re
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, parse_qsl, urlencode, urlsplit

from migration_evals.core.serving import ServingThread

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE: dict[str, Any] = json.loads(
    (ROOT / "tests" / "fixtures" / "github" / "pull-request.json").read_text()
)
EXAMPLE_API = "https://api.github.com"
EXAMPLE_REPO = "octocat/Hello-World"
TOKEN = "ghp_" + "T" * 36  # token-shaped, so scrubbing is really exercised
POM_DIFF = "diff --git a/pom.xml b/pom.xml\n--- a/pom.xml\n+++ b/pom.xml\n@@ -1 +1 @@\n-8\n+17\n"
RESET_AT = 1_767_225_600  # 2026-01-01T00:00:00Z, the X-RateLimit-Reset the upstream gives


@dataclass
class FakePull:
    number: int
    author: str
    created_at: str
    head_sha: str
    base_sha: str
    merged_at: str | None = None
    closed_at: str | None = None
    merge_commit_sha: str | None = None
    labels: tuple[str, ...] = ()
    diff: str = ""
    title: str = "Upgrade to Java 17"


@dataclass
class FakeRepo:
    full_name: str = EXAMPLE_REPO
    clone_url: str = f"https://github.com/{EXAMPLE_REPO}.git"
    default_branch: str = "main"
    created_at: str = "2011-01-26T19:01:12Z"
    pulls: list[FakePull] = field(default_factory=list)


@dataclass
class Seen:
    method: str
    path: str
    headers: Mapping[str, str]


class FakeGitHub:
    """The upstream server; ``rate_limit_once``/``retry_after_once``/``server_error_once``
    name request paths answered once with that failure."""

    def __init__(
        self,
        repos: list[FakeRepo],
        *,
        rate_limit_once: tuple[str, ...] = (),
        retry_after_once: tuple[str, ...] = (),
        server_error_once: tuple[str, ...] = (),
    ) -> None:
        self.repos = {repo.full_name: repo for repo in repos}
        self.pending_limits = {canonical(path): "primary" for path in rate_limit_once}
        self.pending_limits.update({canonical(path): "secondary" for path in retry_after_once})
        self.pending_limits.update({canonical(path): "outage" for path in server_error_once})
        self.failing = 0  # answer this many requests, whatever they are, with a 502
        self.seen: list[Seen] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        self._serving = ServingThread(self._httpd)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> FakeGitHub:
        self._serving.start()
        return self

    def __exit__(
        self, _t: type[BaseException] | None, _v: BaseException | None, _tb: TracebackType | None
    ) -> None:
        self._serving.stop()

    # -- responses ----------------------------------------------------------------------

    def respond(
        self, method: str, target: str, headers: Mapping[str, str]
    ) -> tuple[int, dict[str, str], str]:
        with self._lock:
            self.seen.append(Seen(method, target, dict(headers)))
            limit = self.pending_limits.pop(canonical(target), None)
            if self.failing > 0:
                self.failing -= 1
                limit = "outage"
        if headers.get("authorization") != f"token {TOKEN}":
            return _json(401, {"message": "Bad credentials"})
        if limit == "primary":
            return _json(
                403,
                {"message": "API rate limit exceeded for user ID 1."},
                {"x-ratelimit-remaining": "0", "x-ratelimit-limit": "5000",
                 "x-ratelimit-reset": str(RESET_AT)},
            )  # fmt: skip
        if limit == "outage":
            return _json(502, {"message": "Server Error"})
        if limit == "secondary":
            message = "You have exceeded a secondary rate limit. Please wait a few minutes."
            return _json(429, {"message": message}, {"retry-after": "7"})
        return self._route(target, headers.get("accept", ""))

    def _route(self, target: str, accept: str) -> tuple[int, dict[str, str], str]:
        parts = urlsplit(target)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        if parts.path == "/search/issues":
            return self._search(query)
        match = re.fullmatch(r"/repos/([^/]+/[^/]+)(/pulls)?(?:/(\d+))?", parts.path)
        repo = self.repos.get(match.group(1)) if match else None
        if match is None or repo is None:
            return _json(404, {"message": "Not Found"})
        if match.group(3):
            pull = next((p for p in repo.pulls if p.number == int(match.group(3))), None)
            if pull is None:
                return _json(404, {"message": "Not Found"})
            if accept == "application/vnd.github.diff":
                return 200, {"content-type": "text/plain; charset=utf-8"}, pull.diff
            return _json(200, self.pull_json(repo, pull))
        if match.group(2):
            items = [self.pull_json(repo, p) for p in sorted(repo.pulls, key=lambda p: p.number)]
            return self._page(parts.path, query, items)
        return _json(200, self.repo_json(repo))

    def _page(
        self, path: str, query: dict[str, str], items: list[Any], wrap: bool = False
    ) -> tuple[int, dict[str, str], str]:
        per_page, page = int(query.get("per_page", 30)), int(query.get("page", 1))
        last = max(1, -(-len(items) // per_page))
        chunk = items[(page - 1) * per_page : page * per_page]
        links = []
        for rel, number in (("next", page + 1), ("last", last)):
            if number <= last and (rel == "last" or page < last):
                params = "&".join(f"{k}={v}" for k, v in {**query, "page": number}.items())
                links.append(f'<{self.base_url}{path}?{params}>; rel="{rel}"')
        extra = {"link": ", ".join(links)} if links else {}
        body: Any = chunk
        if wrap:
            body = {"total_count": len(items), "incomplete_results": False, "items": chunk}
        return _json(200, body, extra)

    def _search(self, query: dict[str, str]) -> tuple[int, dict[str, str], str]:
        terms = query.get("q", "").split()
        author = next((t[7:] for t in terms if t.startswith("author:")), None)
        labels = next(
            (t[6:].replace('"', "").split(",") for t in terms if t.startswith("label:")), None
        )
        hits = []
        for repo in self.repos.values():
            for pull in repo.pulls:
                if author and pull.author != author:
                    continue
                if labels and not set(labels) & set(pull.labels):
                    continue
                hits.append(self.issue_json(repo, pull))
        return self._page("/search/issues", query, hits, wrap=True)

    # -- bodies -------------------------------------------------------------------------

    def _rebased(self, value: Any, repo: FakeRepo) -> Any:
        text = json.dumps(value).replace(EXAMPLE_API, self.base_url)
        return json.loads(text.replace(EXAMPLE_REPO, repo.full_name))

    def repo_json(self, repo: FakeRepo) -> dict[str, Any]:
        data: dict[str, Any] = self._rebased(copy.deepcopy(TEMPLATE["base"]["repo"]), repo)
        data.update(
            full_name=repo.full_name,
            name=repo.full_name.split("/")[1],
            clone_url=repo.clone_url,
            default_branch=repo.default_branch,
            created_at=repo.created_at,
        )
        return data

    def pull_json(self, repo: FakeRepo, pull: FakePull) -> dict[str, Any]:
        data: dict[str, Any] = self._rebased(copy.deepcopy(TEMPLATE), repo)
        api = f"{self.base_url}/repos/{repo.full_name}"
        data.update(
            url=f"{api}/pulls/{pull.number}",
            html_url=f"https://github.com/{repo.full_name}/pull/{pull.number}",
            number=pull.number,
            title=pull.title,
            state="closed" if pull.closed_at else "open",
            created_at=pull.created_at,
            merged_at=pull.merged_at,
            closed_at=pull.closed_at,
            merged=pull.merged_at is not None,
            merge_commit_sha=pull.merge_commit_sha,
            labels=[{**TEMPLATE["labels"][0], "name": name} for name in pull.labels],
        )
        data["user"] = {**data["user"], "login": pull.author}
        data["head"] = {**data["head"], "sha": pull.head_sha}
        data["base"] = {**data["base"], "sha": pull.base_sha, "ref": repo.default_branch,
                        "repo": self.repo_json(repo)}  # fmt: skip
        return data

    def issue_json(self, repo: FakeRepo, pull: FakePull) -> dict[str, Any]:
        api = f"{self.base_url}/repos/{repo.full_name}"
        return {
            "url": f"{api}/issues/{pull.number}",
            "repository_url": api,
            "number": pull.number,
            "title": pull.title,
            "state": "closed" if pull.closed_at else "open",
            "user": {"login": pull.author},
            "labels": [{"name": name} for name in pull.labels],
            "pull_request": {"url": f"{api}/pulls/{pull.number}"},
            "created_at": pull.created_at,
            "score": 1.0,
        }


def canonical(target: str) -> str:
    parts = urlsplit(target)
    return parts.path + "?" + urlencode(sorted(parse_qsl(parts.query)))


def _json(
    status: int, body: Any, headers: Mapping[str, str] | None = None
) -> tuple[int, dict[str, str], str]:
    return (
        status,
        {"content-type": "application/json; charset=utf-8", **(headers or {})},
        json.dumps(body),
    )


def _handler(upstream: FakeGitHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go out as two small writes: with Nagle's algorithm on, the body
        # waits for the client's delayed acknowledgement of the headers, every response.
        disable_nagle_algorithm = True

        def do_GET(self) -> None:
            headers = {k.lower(): v for k, v in self.headers.items()}
            status, extra, body = upstream.respond("GET", self.path, headers)
            data = body.encode()
            self.send_response(status)
            for name, value in extra.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


def sample_repo(clone_url: str = f"https://github.com/{EXAMPLE_REPO}.git") -> FakeRepo:
    """Five pull requests: merged, closed unmerged, open; two authors; labels."""
    sha = lambda n: f"{n:x}" * (40 // len(f"{n:x}"))  # noqa: E731 - a readable fake sha
    pulls = [
        FakePull(1, "agent-bot", "2025-01-02T10:00:00Z", sha(0xa1), sha(0xb1),
                 merged_at="2025-01-03T10:00:00Z", closed_at="2025-01-03T10:00:00Z",
                 merge_commit_sha=sha(0xc1), labels=("java17",),
                 diff=POM_DIFF),
        FakePull(2, "octocat", "2025-01-04T10:00:00Z", sha(0xa2), sha(0xb2),
                 closed_at="2025-01-05T10:00:00Z", labels=("java17",)),
        FakePull(3, "agent-bot", "2025-01-06T10:00:00Z", sha(0xa3), sha(0xb3),
                 merged_at="2025-01-07T10:00:00Z", closed_at="2025-01-07T10:00:00Z",
                 merge_commit_sha=sha(0xc3)),
        FakePull(4, "agent-bot", "2025-01-08T10:00:00Z", sha(0xa4), sha(0xb4), labels=("java17",)),
        FakePull(5, "octocat", "2025-01-09T10:00:00Z", sha(0xa5), sha(0xb5),
                 merged_at="2025-01-10T10:00:00Z", closed_at="2025-01-10T10:00:00Z",
                 merge_commit_sha=sha(0xc5)),
    ]  # fmt: skip
    return FakeRepo(clone_url=clone_url, pulls=pulls)


def record_fixture_cassettes(root: Path) -> None:
    """Record the committed cassettes: a listing over three pages with a rate limit on page 2."""
    from migration_evals.core.cassette import CassetteLibrary
    from migration_evals.core.github import GitHubApi, RecordingTransport
    from migration_evals.core.github.live import PyGithubTransport
    from migration_evals.core.ports import PullRequestQuery
    from migration_evals.miners.github import GitHubProvider
    from tests.fakes import FakeClock

    page2 = f"/repos/{EXAMPLE_REPO}/pulls?state=all&sort=created&direction=asc&per_page=2&page=2"
    with FakeGitHub([sample_repo()], rate_limit_once=(page2,)) as upstream:
        recorder = RecordingTransport(
            PyGithubTransport(upstream.base_url),
            CassetteLibrary(root),
            base_url=upstream.base_url,
            recorded_by="hand: tests/miners/github_upstream.py (GitHub's example response)",
        )
        api = GitHubApi(
            recorder,
            base_url=upstream.base_url,
            credentials=lambda: f"token {TOKEN}",
            clock=lambda: float(RESET_AT - 30),
        )
        provider = GitHubProvider(api, clock=FakeClock(_at(RESET_AT - 30)), per_page=2)
        pulls = list(provider.pull_requests(PullRequestQuery(repos=(EXAMPLE_REPO,))))
        provider.diff(EXAMPLE_REPO, 1)
    print(f"recorded {len(pulls)} pull requests into {root / 'github'}")


def _at(epoch: float) -> Any:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(epoch, UTC)


if __name__ == "__main__":
    record_fixture_cassettes(Path(sys.argv[1]))
