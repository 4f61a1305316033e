"""The GitHub changeset provider, on PyGithub.

Pull requests come from listing repositories, or from the search API when labels,
authors or a free query narrow them down (labels are alternatives: any of them; one
search per author). Each becomes a ``PullRequestInfo``: clone URL, base and head shas,
author (an agent when configured as one), created/merged/closed dates and the
repository's creation date, which the contamination tripwire buckets by. Diffs come from
the pull request endpoint with GitHub's diff media type.

The client comes in through the constructor (live, or pointed at the cassette server),
so tests never patch anything. It implements the read side of the GitHub port
(``migration_evals.core.ports.PullRequestReader``) that the App's client implements too, and yields
the same ``PullRequestInfo``. Rate limits are honoured here rather than inside urllib3: the
wait is read by ``migration_evals.core.retry`` (the App's and the judges' reading), goes through
``clock.sleep`` (mining is a command, not a worker serving others), is bounded, and a
request is retried a bounded number of times; a 5xx or a dropped connection is retried
the same way after ``migration_evals.core.retry``'s backoff with jitter. Every other failure is a
``ChangesetProviderError``; none is ever a label.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Iterator, Mapping
from datetime import date, datetime
from functools import partial
from typing import Any, TypeVar

import requests
from github import Github, GithubException, RateLimitExceededException
from github.GithubObject import GithubObject
from github.PaginatedList import PaginatedList
from github.PullRequest import PullRequest
from github.Repository import Repository

from migration_evals.core.clock import Clock, as_utc
from migration_evals.core.errors import ChangesetProviderError
from migration_evals.core.ports import PullRequestInfo, PullRequestQuery
from migration_evals.core.retry import SECONDARY_LIMIT_WAIT_S, Backoff, rate_limit_wait_s

__all__ = ["DIFF_MEDIA_TYPE", "GitHubProvider", "search_queries"]

log = logging.getLogger(__name__)

T = TypeVar("T")
G = TypeVar("G", bound=GithubObject)
DIFF_MEDIA_TYPE = "application/vnd.github.diff"
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


def _limit_wait_s(exc: GithubException, now: float) -> float | None:
    """Seconds the limit asks for, or None when ``exc`` is no rate limit."""
    wait = rate_limit_wait_s(exc.status, exc.headers or {}, now)
    if wait is None and isinstance(exc, RateLimitExceededException):
        return SECONDARY_LIMIT_WAIT_S  # PyGithub saw a limit in the message alone
    return wait


def _repo_of(repository_url: str) -> str:
    owner, name = repository_url.rstrip("/").rsplit("/", 2)[-2:]
    return f"{owner}/{name}"


class GitHubProvider:
    """``ChangesetProvider`` over a PyGithub client."""

    def __init__(
        self,
        client: Github,
        *,
        clock: Clock,
        agent_authors: Mapping[str, str] | None = None,
        max_retries: int = 5,
        max_wait_s: float = 3600.0,
        backoff: Backoff = OUTAGE_BACKOFF,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        self.client = client
        self.clock = clock
        self.agent_authors = dict(agent_authors or {})
        self.max_retries = max_retries
        self.max_wait_s = max_wait_s
        # Between retries of a request GitHub failed (5xx, a dropped connection); a rate
        # limit waits as long as it says instead.
        self.backoff = backoff
        self.jitter = jitter
        self._repos: dict[str, Repository] = {}

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
        what = f"pull request {repo}#{number}"
        pull = self._call(what, lambda: self._repo(repo).get_pull(number))
        return self._call(what, lambda: self._info(pull))

    def diff(self, repo: str, number: int) -> str:
        """The pull request's diff against its merge base, as GitHub renders it."""

        def fetch() -> Any:
            _, data = self.client.requester.requestJsonAndCheck(
                "GET", f"/repos/{repo}/pulls/{number}", headers={"Accept": DIFF_MEDIA_TYPE}
            )
            return data

        data = self._call(f"the diff of {repo}#{number}", fetch)
        # PyGithub wraps a non-JSON body as {"data": text}; an empty diff arrives as nothing.
        return str(data["data"]) if isinstance(data, dict) and "data" in data else ""

    # -- listing ------------------------------------------------------------------------

    def _listed(self, query: PullRequestQuery) -> Iterator[PullRequestInfo]:
        if not query.repos:
            raise ChangesetProviderError("give repositories, labels, authors or a search query")
        for name in query.repos:
            pulls = self._repo(name).get_pulls(state="all", sort="created", direction="asc")
            for pull in self._each(f"pull requests of {name}", pulls):
                yield self._call(f"pull request {name}#{pull.number}", partial(self._info, pull))

    def _search(self, query: PullRequestQuery) -> Iterator[PullRequestInfo]:
        for text in search_queries(query):
            hits = self.client.search_issues(text, sort="created", order="asc")
            for hit in self._each(f"search {text!r}", hits):
                url = self._call("a search hit", partial(getattr, hit, "repository_url"))
                yield self.pull_request(_repo_of(str(url)), hit.number)

    def _repo(self, name: str) -> Repository:
        """The repository, fetched once per provider (one request, not one per PR)."""
        if name not in self._repos:
            self._repos[name] = self._call(f"repository {name}", lambda: self.client.get_repo(name))
        return self._repos[name]

    def _each(self, what: str, items: PaginatedList[G]) -> Iterator[G]:
        """Iterate a paginated list page by page; a rate-limited page is retried in place."""
        index = 0
        while True:
            try:
                item = self._call(what, partial(items.__getitem__, index))
            except IndexError:
                return
            yield item
            index += 1

    def _info(self, pull: PullRequest) -> PullRequestInfo:
        base_repo = pull.base.repo
        author = pull.user.login
        merged_at = _utc(pull.merged_at)
        return PullRequestInfo(
            repo=base_repo.full_name,
            number=pull.number,
            title=pull.title,
            url=pull.html_url,
            clone_url=base_repo.clone_url,
            default_branch=base_repo.default_branch,
            base_sha=pull.base.sha,
            head_sha=pull.head.sha,
            author=author,
            is_agent=author in self.agent_authors,
            created_at=as_utc(pull.created_at),
            repo_created_at=_date(base_repo.created_at),  # None when GitHub did not say
            merged_at=merged_at,
            closed_at=_utc(pull.closed_at),
            # For an unmerged PR GitHub reports a test merge here; it means nothing yet.
            merge_commit_sha=pull.merge_commit_sha if merged_at else None,
            labels=tuple(label.name for label in pull.labels),
            branch=pull.head.ref or "",
            state=pull.state or "",
        )

    # -- calling GitHub -----------------------------------------------------------------

    def _call(self, what: str, fn: Callable[[], T]) -> T:
        """Run one request (or lazy attribute load), waiting out rate limits and brief
        outages (5xx, dropped connections), boundedly."""
        for attempt in range(self.max_retries + 1):
            try:
                return fn()
            except GithubException as exc:
                limit = _limit_wait_s(exc, self.clock.now().timestamp())
                wait = limit if limit is not None or exc.status < 500 else self._backoff(attempt)
                if wait is None or attempt == self.max_retries:
                    raise self._error(what, exc, limited=limit is not None) from exc
                self._wait(what, exc, wait, limited=limit is not None)
            except requests.RequestException as exc:
                if attempt == self.max_retries:
                    raise ChangesetProviderError(f"cannot reach GitHub for {what}: {exc}") from exc
                self._wait(what, exc, self._backoff(attempt), limited=False)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _backoff(self, attempt: int) -> float:
        return self.backoff.delay_s(attempt, self.jitter())

    def _wait(self, what: str, exc: Exception, seconds: float, *, limited: bool) -> None:
        seconds = max(1.0, seconds)  # a limit that says "now" still gets a moment
        if seconds > self.max_wait_s:
            raise ChangesetProviderError(
                f"GitHub rate limit on {what}: reset in {seconds:.0f}s, more than the "
                f"{self.max_wait_s:.0f}s this provider waits"
            ) from exc
        why = "rate limit" if limited else f"failure ({exc})"
        log.warning("GitHub %s on %s; waiting %.0fs", why, what, seconds)
        self.clock.sleep(seconds)

    @staticmethod
    def _error(what: str, exc: GithubException, *, limited: bool) -> ChangesetProviderError:
        data = exc.data if isinstance(exc.data, dict) else {}
        mark = data.get("fabricated")
        if isinstance(mark, dict):
            return ChangesetProviderError(f"{what}: {mark.get('reason', 'no recording')}")
        message = data.get("message") or exc.message or "no message"
        if limited:
            return ChangesetProviderError(f"GitHub rate limit on {what} persisted: {message}")
        return ChangesetProviderError(f"GitHub answered {exc.status} for {what}: {message}")


def _utc(value: datetime | None) -> datetime | None:
    return as_utc(value) if value is not None else None


def _date(value: datetime | None) -> date | None:
    return as_utc(value).date() if value is not None else None
