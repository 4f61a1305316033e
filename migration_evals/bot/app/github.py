"""The GitHub client adapter, on PyGithub: App JWT, installation tokens, write pacing.

::

    InfrastructureError (core)
    └── GitHubError              the API refused for good
        ├── GitHubNotFound       404: the object is not there (or not visible to the App)
        └── GitHubUnavailable    5xx, network error or rate limit: try again later
                                 (also a ``ServiceUnavailableError``; ``retry_after_s``)
            └── GitHubRateLimited    403/429 with a limit; ``retry_after_s`` says how long

``GitHubApp`` signs App JWTs and trades them for installation tokens, cached per
installation and refreshed five minutes before they expire (or at once after a 401).
``Installation`` is the client the handlers take (``migration_evals.core.ports.GitHubClient``). It
never sleeps on an outage: a worker thread waiting for GitHub serves no one, so an unavailable
API surfaces at once as ``GitHubUnavailable`` with the wait the response asked for
(``Retry-After``, ``x-ratelimit-reset``, read by ``migration_evals.core.retry``), and the job queue
puts the job back with backoff. Writes to one installation are serialised and paced by
GitHub's documented secondary limits (``migration_evals.bot.app.pacing``: a second apart, 80 a
minute,
500 an hour); check-run writes waiting for their turn go before comments and reactions.
"""

from __future__ import annotations

import base64
import functools
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

import requests
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from github import Auth, Github, GithubIntegration
from github.GithubException import GithubException
from github.Requester import Requester

from migration_evals.bot.app.pacing import GITHUB_PACING, PacingRule, WritePacing
from migration_evals.core.errors import InfrastructureError, ServiceUnavailableError
from migration_evals.core.ports import GitHubClient, PullRequestInfo
from migration_evals.core.retry import SECONDARY_LIMIT_WAIT_S, rate_limit_wait_s, retry_after_s

__all__ = [
    "DIFF_MEDIA_TYPE",
    "ClientPolicy",
    "GitHubApp",
    "GitHubClient",
    "GitHubError",
    "GitHubNotFound",
    "GitHubRateLimited",
    "GitHubUnavailable",
    "Installation",
]

DIFF_MEDIA_TYPE = "application/vnd.github.diff"
_SECONDARY = "secondary rate limit"  # in the message of a 403 that is a limit, not a refusal
_TOKEN_MARGIN = timedelta(minutes=5)


class GitHubError(InfrastructureError):
    """Root of the GitHub adapter: the API refused for good."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class GitHubNotFound(GitHubError):
    """404: the object does not exist or the installation cannot see it."""


class GitHubUnavailable(GitHubError, ServiceUnavailableError):
    """GitHub answered 5xx, could not be reached, or limits us: worth trying again later."""

    def __init__(
        self, message: str, *, status: int | None = None, retry_after_s: float | None = None
    ) -> None:
        ServiceUnavailableError.__init__(self, message, retry_after_s=retry_after_s)
        self.status = status


class GitHubRateLimited(GitHubUnavailable):
    """Rate limited (403/429 with a limit): ``retry_after_s`` is when it resets."""


@dataclass(frozen=True, slots=True)
class ClientPolicy:
    """How the client talks to GitHub: how writes are paced, the request timeout."""

    pacing: PacingRule = GITHUB_PACING
    timeout_s: int = 30


def _message(exc: GithubException) -> str:
    data = exc.data if isinstance(exc.data, dict) else {}
    return str(data.get("message") or exc.data or exc)


@dataclass
class _Token:
    value: str
    expires_at: datetime


class GitHubApp:
    """The App's own identity: JWTs, installation tokens, installation clients."""

    def __init__(
        self,
        app_id: int,
        private_key: str,
        *,
        base_url: str,
        policy: ClientPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.app_id = app_id
        self.base_url = base_url.rstrip("/")
        self.policy = policy or ClientPolicy()
        self.sleep = sleep
        self.clock = clock
        self._integration = GithubIntegration(
            auth=Auth.AppAuth(app_id, _ParsedKey(private_key)),
            base_url=self.base_url,
            timeout=self.policy.timeout_s,
            retry=None,
            seconds_between_requests=None,
            seconds_between_writes=None,
        )
        self._tokens: dict[int, _Token] = {}
        self._clients: dict[int, Installation] = {}
        self._lock = threading.Lock()

    def installation(self, installation_id: int) -> Installation:
        """The (cached) client for one installation."""
        with self._lock:
            client = self._clients.get(installation_id)
            if client is None:
                client = Installation(self, installation_id)
                self._clients[installation_id] = client
            return client

    def token(self, installation_id: int, *, force: bool = False) -> str:
        """An installation token valid for at least five more minutes."""
        with self._lock:
            cached = self._tokens.get(installation_id)
            now = datetime.fromtimestamp(self.clock(), UTC)
            if cached and not force and cached.expires_at - _TOKEN_MARGIN > now:
                return cached.value
        granted = self._app_call(lambda: self._integration.get_access_token(installation_id))
        expires = granted.expires_at
        if expires.tzinfo is None:
            expires = expires.replace(tzinfo=UTC)
        with self._lock:
            self._tokens[installation_id] = _Token(granted.token, expires)
        return str(granted.token)

    def installation_ids(self) -> list[int]:
        """Every installation of the App (JWT-authenticated)."""
        rows = self._app_call(lambda: self._paged_app("/app/installations"))
        return [int(row["id"]) for row in rows]

    def probe(self) -> str | None:
        """Whether GitHub answers the App as itself (``GET /app``, JWT-authenticated): None
        when it does, else what is wrong (unreachable, down, the key or id refused)."""
        requester = self._integration.requester
        try:
            self._app_call(lambda: requester.requestJsonAndCheck("GET", "/app"))
        except GitHubUnavailable as exc:
            return f"GitHub is unavailable to the App at {self.base_url}: {exc}"
        except GitHubError as exc:
            return f"GitHub refused the App's id or private key ({exc})"
        return None

    def _paged_app(self, path: str) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        requester = self._integration.requester
        for page in range(1, 100):
            _, data = requester.requestJsonAndCheck(
                "GET", path, parameters={"per_page": 100, "page": page}
            )
            rows = data if isinstance(data, list) else []
            found.extend(rows)
            if len(rows) < 100:
                break
        return found

    def _app_call(self, call: Callable[[], Any]) -> Any:
        return _translated(call, self.clock, on_unauthorised=None)


class _ParsedKey:
    """The App's private key as PyJWT signs with it, parsed once per key: handed the PEM,
    PyJWT parses and checks it again for every JWT (about 50 ms for an RSA key, one JWT
    per installation token). A PEM that does not parse goes to PyJWT as it is, which
    refuses it as it always did."""

    def __init__(self, pem: str) -> None:
        self._pem = pem

    def __call__(self) -> Any:
        return _parsed_private_key(self._pem) or self._pem


@functools.lru_cache(maxsize=8)
def _parsed_private_key(pem: str) -> Any:
    try:
        return serialization.load_pem_private_key(pem.encode(), password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm):
        return None


class _WriteTurns:
    """One write at a time; a waiting urgent write (a check run) goes before the others."""

    def __init__(self) -> None:
        self._turn = threading.Condition()
        self._busy = False
        self._urgent_waiting = 0

    def waiting_urgent(self) -> int:
        with self._turn:
            return self._urgent_waiting

    @contextmanager
    def turn(self, *, urgent: bool) -> Iterator[None]:
        with self._turn:
            self._urgent_waiting += urgent
            try:
                while self._busy or (not urgent and self._urgent_waiting):
                    self._turn.wait()
            finally:
                self._urgent_waiting -= urgent
            self._busy = True
        try:
            yield
        finally:
            with self._turn:
                self._busy = False
                self._turn.notify_all()


class Installation:
    """The client handlers take: the calls the bot makes, as one installation."""

    def __init__(self, app: GitHubApp, installation_id: int) -> None:
        self.app = app
        self.installation_id = installation_id
        self._write_turns = _WriteTurns()
        self._pacing = WritePacing(app.policy.pacing)
        self._github: Github | None = None
        self._github_token = ""

    # -- plumbing -------------------------------------------------------------------------

    def _requester(self) -> Requester:
        token = self.app.token(self.installation_id)
        if self._github is None or token != self._github_token:
            self._github = Github(
                auth=Auth.Token(token),
                base_url=self.app.base_url,
                timeout=self.app.policy.timeout_s,
                retry=None,
                seconds_between_requests=None,
                seconds_between_writes=None,
                per_page=100,
            )
            self._github_token = token
        return self._github.requester

    @contextmanager
    def _write_slot(self, *, urgent: bool = False) -> Iterator[None]:
        with self._write_turns.turn(urgent=urgent):
            wait = self._pacing.wait_s(self.app.clock())
            if wait > 0:
                self.app.sleep(wait)
            try:
                yield
            finally:
                # Counted from its answer: the next write then reaches GitHub at least the
                # interval after this one did, however long this one took on the way.
                self._pacing.note(self.app.clock())

    def request(
        self,
        verb: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        body: Mapping[str, Any] | None = None,
        accept: str | None = None,
    ) -> Any:
        """One API call (a 401 refreshes the token once); writes one at a time, paced."""
        headers = {"Accept": accept} if accept else None
        urgent = "/check-runs" in path  # people wait for check runs, not for replies

        def call() -> Any:
            with nullcontext() if verb == "GET" else self._write_slot(urgent=urgent):
                _, data = self._requester().requestJsonAndCheck(
                    verb,
                    path,
                    parameters=dict(params) if params else None,
                    headers=headers,
                    input=dict(body) if body is not None else None,
                )
            return data

        def refresh() -> None:
            self.app.token(self.installation_id, force=True)

        return _translated(call, self.app.clock, on_unauthorised=refresh)

    def _paged(self, path: str, *, key: str | None = None, **params: Any) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        for page in range(1, 100):
            data = self.request("GET", path, params={**params, "per_page": 100, "page": page})
            rows = (data or {}).get(key, []) if key else (data or [])
            found.extend(rows)
            if len(rows) < 100:
                break
        return found

    # -- reads ----------------------------------------------------------------------------

    def pull(self, repo: str, number: int) -> dict[str, Any]:
        return dict(self.request("GET", f"/repos/{repo}/pulls/{number}"))

    def pull_request(self, repo: str, number: int) -> PullRequestInfo:
        return PullRequestInfo.from_rest(self.pull(repo, number))

    def diff(self, repo: str, number: int) -> str:
        return self.pull_diff(repo, number)

    def pull_diff(self, repo: str, number: int) -> str:
        data = self.request("GET", f"/repos/{repo}/pulls/{number}", accept=DIFF_MEDIA_TYPE)
        return str((data or {}).get("data", ""))

    def merge_base(self, repo: str, base: str, head: str) -> str:
        """The commit the PR's diff is taken against (the diff is three-dot)."""
        data = self.request("GET", f"/repos/{repo}/compare/{base}...{head}")
        return str(data["merge_base_commit"]["sha"])

    def pulls_for_commit(self, repo: str, sha: str) -> list[dict[str, Any]]:
        return self._paged(f"/repos/{repo}/commits/{sha}/pulls")

    def open_pulls(self, repo: str) -> list[dict[str, Any]]:
        return self._paged(f"/repos/{repo}/pulls", state="open")

    def repositories(self) -> list[str]:
        rows = self._paged("/installation/repositories", key="repositories")
        return [str(row["full_name"]) for row in rows]

    def file_text(self, repo: str, path: str, ref: str) -> str | None:
        """A file's text at ``ref``, or None when it does not exist."""
        try:
            data = self.request("GET", f"/repos/{repo}/contents/{quote(path)}", params={"ref": ref})
        except GitHubNotFound:
            return None
        if not isinstance(data, dict) or data.get("type") != "file":
            return None
        return base64.b64decode(str(data.get("content", ""))).decode("utf-8", "replace")

    def check_runs(self, repo: str, sha: str, name: str) -> list[dict[str, Any]]:
        return self._paged(
            f"/repos/{repo}/commits/{sha}/check-runs",
            key="check_runs",
            check_name=name,
            filter="all",
        )

    def permission(self, repo: str, user: str) -> tuple[str, str]:
        """(permission, role_name) of ``user`` on ``repo``; ("none", "") for strangers."""
        try:
            data = self.request("GET", f"/repos/{repo}/collaborators/{quote(user)}/permission")
        except GitHubNotFound:
            return "none", ""
        return str(data.get("permission") or "none"), str(data.get("role_name") or "")

    # -- writes ---------------------------------------------------------------------------

    def create_check_run(self, repo: str, body: Mapping[str, Any]) -> dict[str, Any]:
        return dict(self.request("POST", f"/repos/{repo}/check-runs", body=body))

    def update_check_run(self, repo: str, run_id: int, body: Mapping[str, Any]) -> dict[str, Any]:
        return dict(self.request("PATCH", f"/repos/{repo}/check-runs/{run_id}", body=body))

    def comment(self, repo: str, number: int, text: str) -> dict[str, Any]:
        path = f"/repos/{repo}/issues/{number}/comments"
        return dict(self.request("POST", path, body={"body": text}))

    def react(self, repo: str, comment_id: int, content: str) -> None:
        path = f"/repos/{repo}/issues/comments/{comment_id}/reactions"
        self.request("POST", path, body={"content": content})


def _translated(
    call: Callable[[], Any],
    clock: Callable[[], float],
    *,
    on_unauthorised: Callable[[], None] | None,
) -> Any:
    """Run ``call`` once (twice after a 401 that refreshed the token), with PyGithub's and
    requests' errors translated into the ``GitHubError`` tree."""
    try:
        return call()
    except GithubException as exc:
        if exc.status != 401 or on_unauthorised is None:
            raise _error(exc, clock()) from exc
    except requests.RequestException as exc:
        raise GitHubUnavailable(f"cannot reach GitHub: {exc}") from exc
    on_unauthorised()  # the token expired early or was revoked: get a new one, once
    return _translated(call, clock, on_unauthorised=None)


def _error(exc: GithubException, now: float) -> GitHubError:
    headers = {str(k): str(v) for k, v in (exc.headers or {}).items()}
    limited = rate_limit_wait_s(exc.status, headers, now)
    if limited is None and exc.status == 403 and _SECONDARY in _message(exc).lower():
        limited = SECONDARY_LIMIT_WAIT_S  # no header said how long: GitHub asks a minute
    if limited is not None:
        return GitHubRateLimited(
            f"rate limited by GitHub for {limited:.0f}s: {_message(exc)}",
            status=exc.status,
            retry_after_s=limited,
        )
    if exc.status >= 500:
        asked = retry_after_s(headers, datetime.fromtimestamp(now, UTC))
        message = f"GitHub answered {exc.status}: {_message(exc)}"
        return GitHubUnavailable(message, status=exc.status, retry_after_s=asked)
    if exc.status == 404:
        return GitHubNotFound(f"not found: {_message(exc)}", status=404)
    return GitHubError(f"GitHub answered {exc.status}: {_message(exc)}", status=exc.status)
