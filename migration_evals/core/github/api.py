"""The one GitHub REST client: requests over a swappable transport, answers or errors.

``GitHubApi`` builds a ``GitHubRequest`` (method, path relative to the API root, Accept,
JSON body, credentials), hands it to its ``Transport`` and reads the ``GitHubResponse``:
a status of 400 or more becomes an error of the ``GitHubError`` tree
(``migration_evals.core.errors``) by ``error_for``, the same mapping for every caller.
What to do about an error is the caller's: the miners wait a limit out on their clock,
the App puts its job back. Credentials are a callable, read at each request, so a
refreshed installation token or a fresh App JWT goes out without a new client.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol
from urllib.parse import urlencode

from migration_evals.core.errors import (
    GitHubError,
    GitHubNotFound,
    GitHubRateLimited,
    GitHubUnauthorized,
    GitHubUnavailable,
)
from migration_evals.core.retry import SECONDARY_LIMIT_WAIT_S, rate_limit_wait_s, retry_after_s

__all__ = [
    "DEFAULT_ACCEPT",
    "DIFF_MEDIA_TYPE",
    "GitHubApi",
    "GitHubRequest",
    "GitHubResponse",
    "Transport",
    "error_for",
    "next_link",
]

# What the client has always sent when it asks for nothing in particular (the requests
# library's default), so that cassettes recorded before keep their keys.
DEFAULT_ACCEPT = "*/*"
DIFF_MEDIA_TYPE = "application/vnd.github.diff"
_NEXT = re.compile(r'<([^>]+)>\s*;\s*rel="next"')


@dataclass(frozen=True, slots=True)
class GitHubRequest:
    """One call: ``path`` is relative to the API root and carries its query."""

    method: str
    path: str
    accept: str = DEFAULT_ACCEPT
    body: Mapping[str, Any] | None = None
    # Sent, never recorded nor shown: cassettes and error messages leave it out.
    authorization: str | None = field(default=None, repr=False)

    @property
    def body_text(self) -> str | None:
        """The body as it goes on the wire (JSON), None for none."""
        return None if self.body is None else json.dumps(self.body)

    def describe(self) -> str:
        return f"{self.method} {self.path}"


@dataclass(frozen=True, slots=True)
class GitHubResponse:
    """One answer: its status, headers (lower-case names) and body text."""

    status: int
    headers: Mapping[str, str]
    text: str

    def json(self) -> Any:
        """The body as JSON; None for an empty body."""
        return json.loads(self.text) if self.text else None


class Transport(Protocol):
    """Carries a request to GitHub (or a stand-in) and brings its answer back, whatever
    the status. Raises ``GitHubTransportError`` when no answer comes, and
    ``GitHubCassetteMiss`` when a replay has none."""

    def send(self, request: GitHubRequest) -> GitHubResponse: ...

    def close(self) -> None:
        """Let go of connections (a no-op where there are none)."""


def _message(response: GitHubResponse) -> str:
    try:
        data = response.json()
    except ValueError:
        data = None
    if isinstance(data, dict) and data.get("message"):
        return str(data["message"])
    return response.text.strip()[:200] or "no message"


def error_for(request: GitHubRequest, response: GitHubResponse, now: float) -> GitHubError:
    """The error a refused ``request`` is, from ``response`` (``now``: epoch seconds, to
    read a limit's reset against)."""
    status, headers, message = response.status, response.headers, _message(response)
    where = f"({request.describe()})"
    limited = rate_limit_wait_s(status, headers, now)
    if limited is None and status in (403, 429) and "rate limit" in message.lower():
        limited = SECONDARY_LIMIT_WAIT_S  # a limit named in the message alone: a minute
    if limited is not None:
        return GitHubRateLimited(
            f"rate limited by GitHub for {limited:.0f}s: {message} {where}",
            status=status,
            retry_after_s=limited,
        )
    if status >= 500:
        asked = retry_after_s(headers, datetime.fromtimestamp(now, UTC))
        text = f"GitHub answered {status}: {message} {where}"
        return GitHubUnavailable(text, status=status, retry_after_s=asked)
    if status == 401:
        return GitHubUnauthorized(
            f"GitHub answered 401: {message} {where}; the token or the App's key was refused",
            status=401,
        )
    if status == 404:
        return GitHubNotFound(f"GitHub answered 404: {message} {where}", status=404)
    return GitHubError(f"GitHub answered {status}: {message} {where}", status=status)


def next_link(response: GitHubResponse) -> str | None:
    """The next page's URL from the ``Link`` header, None on the last page."""
    found = _NEXT.search(response.headers.get("link", ""))
    return found.group(1) if found else None


def _no_credentials() -> str | None:
    return None


class GitHubApi:
    """The GitHub REST API over ``transport``, as ``credentials()`` (an ``Authorization``
    header value, or None for anonymous calls)."""

    def __init__(
        self,
        transport: Transport,
        *,
        base_url: str,
        credentials: Callable[[], str | None] = _no_credentials,
        clock: Callable[[], float],
    ) -> None:
        self.transport = transport
        self.base_url = base_url.rstrip("/")
        self.credentials = credentials
        self.clock = clock

    def with_credentials(self, credentials: Callable[[], str | None]) -> GitHubApi:
        """The same API and transport, as other credentials (an installation, the App)."""
        return GitHubApi(
            self.transport, base_url=self.base_url, credentials=credentials, clock=self.clock
        )

    def send(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        body: Mapping[str, Any] | None = None,
        accept: str = DEFAULT_ACCEPT,
    ) -> GitHubResponse:
        """One request; an answer of 400 or more raises its ``GitHubError``. ``path`` may be
        an absolute URL under the API root (a ``Link`` header's)."""
        request = GitHubRequest(
            method,
            self._relative(path) + (f"?{urlencode(params)}" if params else ""),
            accept=accept,
            body=body,
            authorization=self.credentials(),
        )
        response = self.transport.send(request)
        if response.status >= 400:
            raise error_for(request, response, self.clock())
        return response

    def json(self, method: str, path: str, **options: Any) -> Any:
        """``send``, the answer read as JSON."""
        return self.send(method, path, **options).json()

    def _relative(self, path: str) -> str:
        if path.startswith(self.base_url):
            return path[len(self.base_url) :] or "/"
        if not path.startswith("/"):
            raise GitHubError(f"{path} is not under the API root {self.base_url}")
        return path
