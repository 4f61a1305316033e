"""The GitHub changeset provider, on the one GitHub client (``migration_evals.core.github``).

Pull requests come from listing repositories, or from the search API when labels,
authors or a free query narrow them down (labels are alternatives: any of them; one
search per author). Each becomes a ``PullRequestInfo`` (``PullRequestInfo.from_rest``,
the App's reading too): clone URL, base and head shas, author (an agent when configured
as one), created/merged/closed dates and the repository's creation date, which the
contamination tripwire buckets by. Lists are followed page by page through their
``Link`` headers. Diffs come from the pull request endpoint with GitHub's diff media type.

The client comes in through the constructor over a live, recording or replaying
transport, so tests never patch anything. It implements the read side of the GitHub port
(``migration_evals.core.ports.PullRequestReader``) that the App's client implements too.
Rate limits are honoured here: the wait the client's error carries (read by
``migration_evals.core.retry``, the App's and the judges' reading) goes through
``clock.sleep`` (mining is a command, not a worker serving others), is bounded, and a
request is retried a bounded number of times; a 5xx or a dropped connection is retried
the same way after ``migration_evals.core.retry``'s backoff with jitter. Every other
failure, a cassette miss included, is a ``ChangesetProviderError``; none is ever a label.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Iterator, Mapping
from functools import partial
from typing import Any, TypeVar

from migration_evals.core.clock import Clock
from migration_evals.core.errors import (
    ChangesetProviderError,
    GitHubError,
    GitHubRateLimited,
    GitHubTransportError,
    GitHubUnavailable,
)
from migration_evals.core.github import DIFF_MEDIA_TYPE, GitHubApi, next_link
from migration_evals.core.ports import PullRequestInfo, PullRequestQuery
from migration_evals.core.retry import Backoff

__all__ = ["DIFF_MEDIA_TYPE", "GitHubProvider", "search_queries"]

log = logging.getLogger(__name__)

T = TypeVar("T")
OUTAGE_BACKOFF = Backoff(base_s=2.0, max_s=60.0)  # 1-2 s, doubling: five retries ~a minute


def _quoted(value: str) -> str:
    return f'"{value}"' if any(c.isspace() for c in value) else value


def search_queries(query: PullRequestQuery) -> list[str]:
    """The search strings for ``query``: one per author (GitHub ANDs repeated qualifiers)."""
    parts = ["is:pr", *(f"repo:{repo}" for repo in query.repos)]
    if query.labels:
        parts.append("label:" + ",".join(_quoted(label) for label in query.labels))
    if query.search:
        parts.append(query.search)
    if not query.authors:
        return [" ".join(parts)]
    return [" ".join([*parts, f"author:{author}"]) for author in query.authors]


def _repo_of(repository_url: str) -> str:
    owner, name = repository_url.rstrip("/").rsplit("/", 2)[-2:]
    return f"{owner}/{name}"


class GitHubProvider:
    """``ChangesetProvider`` over the GitHub client."""

    def __init__(
        self,
        api: GitHubApi,
        *,
        clock: Clock,
        agent_authors: Mapping[str, str] | None = None,
        per_page: int = 100,
        max_retries: int = 5,
        max_wait_s: float = 3600.0,
        backoff: Backoff = OUTAGE_BACKOFF,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        self.api = api
        self.clock = clock
        self.agent_authors = dict(agent_authors or {})
        self.per_page = per_page
        self.max_retries = max_retries
        self.max_wait_s = max_wait_s
        # Between retries of a request GitHub failed (5xx, a dropped connection); a rate
        # limit waits as long as it says instead.
        self.backoff = backoff
        self.jitter = jitter
        self._repos: set[str] = set()

    # -- the port -----------------------------------------------------------------------

    def pull_requests(self, query: PullRequestQuery) -> Iterator[PullRequestInfo]:
        """Every pull request ``query`` selects, each once, up to ``query.limit``."""
        seen: set[tuple[str, int]] = set()
        for info in self._search(query) if query.needs_search else self._listed(query):
            if (info.repo, info.number) in seen:
                continue
            seen.add((info.repo, info.number))
            yield info
            if query.limit is not None and len(seen) >= query.limit:
                return

    def pull_request(self, repo: str, number: int) -> PullRequestInfo:
        self._check_repo(repo)
        path = f"/repos/{repo}/pulls/{number}"
        data = self._call(f"pull request {repo}#{number}", lambda: self.api.json("GET", path))
        return self._info(data)

    def diff(self, repo: str, number: int) -> str:
        """The pull request's diff against its merge base, as GitHub renders it."""
        path = f"/repos/{repo}/pulls/{number}"
        answer = self._call(
            f"the diff of {repo}#{number}",
            lambda: self.api.send("GET", path, accept=DIFF_MEDIA_TYPE),
        )
        return answer.text

    # -- listing ------------------------------------------------------------------------

    def _listed(self, query: PullRequestQuery) -> Iterator[PullRequestInfo]:
        if not query.repos:
            raise ChangesetProviderError("give repositories, labels, authors or a search query")
        for name in query.repos:
            self._check_repo(name)
            params = {"state": "all", "sort": "created", "direction": "asc"}
            for row in self._rows(f"pull requests of {name}", f"/repos/{name}/pulls", params):
                yield self._info(row)

    def _search(self, query: PullRequestQuery) -> Iterator[PullRequestInfo]:
        for text in search_queries(query):
            params = {"q": text, "sort": "created", "order": "asc"}
            for hit in self._rows(f"search {text!r}", "/search/issues", params, key="items"):
                yield self.pull_request(_repo_of(str(hit["repository_url"])), int(hit["number"]))

    def _check_repo(self, name: str) -> None:
        """The repository is there (asked once per provider, not once per PR)."""
        if name not in self._repos:
            self._call(f"repository {name}", lambda: self.api.send("GET", f"/repos/{name}"))
            self._repos.add(name)

    def _rows(
        self, what: str, path: str, params: Mapping[str, str], *, key: str | None = None
    ) -> Iterator[dict[str, Any]]:
        """A listing's rows, page by page along ``Link``; a limited page is retried in place."""
        url: str | None = path
        query: dict[str, Any] | None = {**params, "per_page": self.per_page}
        while url is not None:
            answer = self._call(what, partial(self.api.send, "GET", url, params=query))
            data = answer.json()
            yield from (data or {}).get(key, []) if key else (data or [])
            url, query = next_link(answer), None  # the next URL carries its own query

    def _info(self, data: Mapping[str, Any]) -> PullRequestInfo:
        try:
            return PullRequestInfo.from_rest(data, agent_authors=self.agent_authors)
        except (KeyError, TypeError, ValueError) as exc:
            raise ChangesetProviderError(
                f"GitHub sent a pull request this provider cannot read ({exc!r}); "
                "is the API root a GitHub REST API?"
            ) from exc

    # -- calling GitHub -----------------------------------------------------------------

    def _call(self, what: str, fn: Callable[[], T]) -> T:
        """Run one request, waiting out rate limits and brief outages (5xx, dropped
        connections), boundedly; every error leaves as a ``ChangesetProviderError``."""
        for attempt in range(self.max_retries + 1):
            try:
                return fn()
            except GitHubUnavailable as exc:
                limited = isinstance(exc, GitHubRateLimited)
                if attempt == self.max_retries:
                    raise self._gave_up(what, exc, limited=limited) from exc
                wait = exc.retry_after_s if limited else None
                self._wait(what, exc, wait if wait is not None else self._backoff(attempt))
            except GitHubError as exc:
                raise ChangesetProviderError(f"{what}: {exc}") from exc
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _backoff(self, attempt: int) -> float:
        return self.backoff.delay_s(attempt, self.jitter())

    def _wait(self, what: str, exc: GitHubUnavailable, seconds: float) -> None:
        seconds = max(1.0, seconds)  # a limit that says "now" still gets a moment
        if seconds > self.max_wait_s:
            raise ChangesetProviderError(
                f"GitHub rate limit on {what}: reset in {seconds:.0f}s, more than the "
                f"{self.max_wait_s:.0f}s this provider waits"
            ) from exc
        log.warning("GitHub unavailable on %s (%s); waiting %.0fs", what, exc, seconds)
        self.clock.sleep(seconds)

    @staticmethod
    def _gave_up(what: str, exc: GitHubUnavailable, *, limited: bool) -> ChangesetProviderError:
        if limited:
            return ChangesetProviderError(f"GitHub rate limit on {what} persisted: {exc}")
        if isinstance(exc, GitHubTransportError):
            return ChangesetProviderError(f"{exc} (asking for {what})")
        return ChangesetProviderError(f"{what}: {exc}")
