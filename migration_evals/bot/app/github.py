"""The App's GitHub: its JWT, installation tokens and paced writes, on the one client.

Requests go through ``migration_evals.core.github.GitHubApi`` over the transport the
server's mode gives it (live HTTPS, recorded, or replayed from the cassettes), and fail
with that client's error tree (``migration_evals.core.errors``):

::

    InfrastructureError (core)
    └── GitHubError              the API refused for good
        ├── GitHubUnauthorized   401 (an installation's is retried once, with a new token)
        ├── GitHubNotFound       404: the object is not there (or not visible to the App)
        ├── GitHubCassetteMiss   replaying, nothing was recorded for the request
        └── GitHubUnavailable    5xx, network error or rate limit: try again later
                                 (also a ``ServiceUnavailableError``; ``retry_after_s``)
            ├── GitHubRateLimited    403/429 with a limit; ``retry_after_s`` says how long
            └── GitHubTransportError no answer at all

``GitHubApp`` signs App JWTs and trades them for installation tokens, cached per
installation and refreshed five minutes before they expire (or at once after a 401).
``Installation`` is the client the handlers take (``migration_evals.core.ports.GitHubClient``). It
never sleeps on an outage: a worker thread waiting for GitHub serves no one, so an unavailable
API surfaces at once as ``GitHubUnavailable`` with the wait the response asked for
(``Retry-After``, ``x-ratelimit-reset``, read by ``migration_evals.core.retry``), and the job queue
puts the job back with backoff. Writes to one installation are serialised and paced by
GitHub's documented secondary limits (``migration_evals.bot.app.pacing``: a second apart, 80 a
minute, 500 an hour); check-run writes waiting for their turn go before comments and reactions.
"""

from __future__ import annotations

import base64
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

from migration_evals.bot.app.pacing import GITHUB_PACING, PacingRule, WritePacing
from migration_evals.core.errors import (
    GitHubError,
    GitHubNotFound,
    GitHubRateLimited,
    GitHubUnauthorized,
    GitHubUnavailable,
)
from migration_evals.core.github import DIFF_MEDIA_TYPE, GitHubApi, Transport
from migration_evals.core.github.live import AppJwt, PyGithubTransport
from migration_evals.core.ports import GitHubClient, PullRequestInfo

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

_TOKEN_MARGIN = timedelta(minutes=5)


@dataclass(frozen=True, slots=True)
class ClientPolicy:
    """How the client talks to GitHub: how writes are paced, the request timeout."""

    pacing: PacingRule = GITHUB_PACING
    timeout_s: int = 30


@dataclass
class _Token:
    value: str
    expires_at: datetime


class GitHubApp:
    """The App's own identity: JWTs, installation tokens, installation clients.

    ``transport`` is how requests reach GitHub: live HTTPS to ``base_url`` by default, or
    the recording or replaying transport the server's mode asks for.
    """

    def __init__(
        self,
        app_id: int,
        private_key: str,
        *,
        base_url: str,
        transport: Transport | None = None,
        policy: ClientPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.app_id = app_id
        self.base_url = base_url.rstrip("/")
        self.policy = policy or ClientPolicy()
        self.sleep = sleep
        self.clock = clock
        self.transport = transport or PyGithubTransport(
            self.base_url, timeout_s=self.policy.timeout_s
        )
        self.api = GitHubApi(
            self.transport,
            base_url=self.base_url,
            credentials=AppJwt(app_id, private_key),
            clock=clock,
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
        path = f"/app/installations/{installation_id}/access_tokens"
        granted = self.request("POST", path, body={})  # no narrowing: the App's permissions
        expires = datetime.fromisoformat(str(granted["expires_at"]))
        if expires.tzinfo is None:
            expires = expires.replace(tzinfo=UTC)
        with self._lock:
            self._tokens[installation_id] = _Token(str(granted["token"]), expires)
        return str(granted["token"])

    def installation_ids(self) -> list[int]:
        """Every installation of the App (JWT-authenticated)."""
        return [int(row["id"]) for row in self._paged_app("/app/installations")]

    def probe(self) -> str | None:
        """Whether GitHub answers the App as itself (``GET /app``, JWT-authenticated): None
        when it does, else what is wrong (unreachable, down, the key or id refused)."""
        try:
            self.request("GET", "/app")
        except GitHubUnavailable as exc:
            return f"GitHub is unavailable to the App at {self.base_url}: {exc}"
        except GitHubError as exc:
            return f"GitHub refused the App's id or private key ({exc})"
        return None

    def request(
        self,
        verb: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        body: Mapping[str, Any] | None = None,
    ) -> Any:
        """One API call as the App itself (a JWT)."""
        return self.api.json(verb, path, params=params, body=body)

    def _paged_app(self, path: str) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        for page in range(1, 100):
            data = self.request("GET", path, params={"per_page": 100, "page": page})
            rows = data if isinstance(data, list) else []
            found.extend(rows)
            if len(rows) < 100:
                break
        return found


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
        self.api = app.api.with_credentials(self._authorization)

    # -- plumbing -------------------------------------------------------------------------

    def _authorization(self) -> str:
        return f"token {self.app.token(self.installation_id)}"

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
        """One API call (a 401 refreshes the token once); writes one at a time, paced.
        A non-JSON answer (a diff) comes back as its text."""
        urgent = "/check-runs" in path  # people wait for check runs, not for replies
        options: dict[str, Any] = {"params": params, "body": body}
        if accept:
            options["accept"] = accept

        def call() -> Any:
            with nullcontext() if verb == "GET" else self._write_slot(urgent=urgent):
                answer = self.api.send(verb, path, **options)
            return answer.text if accept == DIFF_MEDIA_TYPE else answer.json()

        try:
            return call()
        except GitHubUnauthorized:
            # The token expired early or was revoked: get a new one, once.
            self.app.token(self.installation_id, force=True)
        return call()

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
        return str(self.request("GET", f"/repos/{repo}/pulls/{number}", accept=DIFF_MEDIA_TYPE))

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
