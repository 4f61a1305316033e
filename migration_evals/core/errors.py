"""The one exception tree of migration-evals.

::

    MigrationEvalsError
    ├── ConfigError                 settings or per-repository configuration is unusable
    ├── SpecError                   a spec file is missing or fails its schema (file, key, expected)
    ├── ChangesetError              a changeset input is malformed (file, line)
    ├── BudgetExceededError         a run would spend more than its budget
    ├── StoreError                  the database cannot be used
    │   ├── LedgerTamperedError     the append-only ledger's hash chain is broken
    │   └── SchemaBehindError       the database's schema is older than this release's
    ├── BrokerError                 the message broker of the Celery executor cannot be used
    ├── CassetteError               a cassette file is unreadable or recording is impossible
    └── InfrastructureError         something outside the candidate failed: never the patch's fault
        ├── ServiceUnavailableError an outside API is down or rate limited: try again later
        ├── RepositoryError         clone, fetch, checkout, missing base commit (the git "port")
        ├── SandboxError            root of the sandbox port (tiers 2-3)
        ├── JudgeError              root of the judge port (tier 4)
        │   ├── JudgeUnavailableError   timeout, connection, 429 or 5xx (also unavailable)
        │   └── JudgeRequestError       the API refused the request itself (other 4xx): not retried
        │       └── JudgeAuthError      the key is missing, wrong or not allowed (401, 403)
        ├── ChangesetProviderError  root of the changeset-provider port (GitHub, files)
        └── GitHubError             the GitHub API refused (the one client, both callers)
            ├── GitHubUnauthorized      401: the token or the App's JWT was refused
            ├── GitHubNotFound          404: not there, or not visible to these credentials
            ├── GitHubCassetteMiss      replay has no recording of the request: never an answer
            └── GitHubUnavailable       try again later (also a ``ServiceUnavailableError``)
                ├── GitHubRateLimited   403/429 with a limit; ``retry_after_s`` says how long
                └── GitHubTransportError    no answer at all: refused, reset, timed out

A candidate failing a tier is never an exception: it is a ``Verdict.FAIL`` value. Only
``InfrastructureError`` and its children turn into ``Verdict.ERROR`` envelopes.
"""

from __future__ import annotations

__all__ = [
    "BrokerError",
    "BudgetExceededError",
    "CassetteError",
    "ChangesetError",
    "ChangesetProviderError",
    "ConfigError",
    "GitHubCassetteMiss",
    "GitHubError",
    "GitHubNotFound",
    "GitHubRateLimited",
    "GitHubTransportError",
    "GitHubUnauthorized",
    "GitHubUnavailable",
    "InfrastructureError",
    "JudgeAuthError",
    "JudgeError",
    "JudgeRequestError",
    "JudgeUnavailableError",
    "LedgerTamperedError",
    "MigrationEvalsError",
    "RepositoryError",
    "SandboxError",
    "SchemaBehindError",
    "ServiceUnavailableError",
    "SpecError",
    "StoreError",
]


class MigrationEvalsError(Exception):
    """Root of every error this project raises on purpose."""


class ConfigError(MigrationEvalsError):
    """Settings or per-repository configuration is unusable."""


class SpecError(MigrationEvalsError):
    """A spec file is missing, unparsable or fails its schema."""

    def __init__(self, file: str, key: str, expected: str) -> None:
        self.file = file
        self.key = key
        self.expected = expected
        where = f"{file}: {key}" if key else file
        super().__init__(f"{where}: {expected}")


class ChangesetError(MigrationEvalsError):
    """A changeset input is malformed; carries the file and line when known.

    ``problems`` lists every (line, message) found when a whole file was checked, so one
    attempt reports them all; the error's text then has one line per problem.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        problems: tuple[tuple[int, str], ...] = (),
    ) -> None:
        self.file = file
        self.line = line
        self.problems = problems
        where = ":".join(str(p) for p in (file, line) if p is not None)
        text = f"{where}: {message}" if where else message
        for number, problem in problems:
            text += f"\n{file}:{number}: {problem}"
        super().__init__(text)


class BudgetExceededError(MigrationEvalsError):
    """A run's forecast or actual spend would exceed its budget."""


class StoreError(MigrationEvalsError):
    """The database cannot be reached or used."""


class LedgerTamperedError(StoreError):
    """The ledger's hash chain does not verify: a row was edited, removed or reordered."""


class SchemaBehindError(StoreError):
    """The database's schema is behind this release's and may not be upgraded here."""


class BrokerError(MigrationEvalsError):
    """The message broker (Redis) cannot be reached or used; the database is unaffected."""


class CassetteError(MigrationEvalsError):
    """A cassette is unreadable, or recording was asked for without a live adapter."""


class InfrastructureError(MigrationEvalsError):
    """Something outside the candidate failed; graded ``error``, never ``fail``."""


class ServiceUnavailableError(InfrastructureError):
    """An outside API (GitHub, a judge) is unreachable, failing or rate limited.

    Retrying later can succeed, so a job that meets it is put back with backoff instead of
    failing or waiting in its worker. ``retry_after_s`` is the wait the server asked for
    (``Retry-After``, a rate-limit reset), if it named one.
    """

    def __init__(self, message: str, *, retry_after_s: float | None = None) -> None:
        self.retry_after_s = retry_after_s
        super().__init__(message)


class RepositoryError(InfrastructureError):
    """Git could not provide the repository or the base commit."""


class SandboxError(InfrastructureError):
    """Root of the sandbox port: the engine, image or harness failed."""


class JudgeError(InfrastructureError):
    """Root of the judge port: the model API failed after retries."""


class JudgeUnavailableError(JudgeError, ServiceUnavailableError):
    """A transient failure (timeout, connection, 429, 5xx); worth retrying.

    ``retry_after_s`` is the wait the server asked for (``retry-after``), if it named one.
    """

    def __init__(self, message: str, *, retry_after_s: float | None = None) -> None:
        ServiceUnavailableError.__init__(self, message, retry_after_s=retry_after_s)


class JudgeRequestError(JudgeError):
    """The API refused the request itself (400, 404, 422...); retrying cannot help."""


class JudgeAuthError(JudgeRequestError):
    """The API key is missing, wrong or lacks permission (401, 403)."""


class ChangesetProviderError(InfrastructureError):
    """Root of the changeset-provider port (GitHub, files)."""


class GitHubError(InfrastructureError):
    """The GitHub API refused a request; ``status`` is its HTTP status (None: no answer)."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class GitHubUnauthorized(GitHubError):
    """401: the credentials were refused (expired, revoked or wrong)."""


class GitHubNotFound(GitHubError):
    """404: the object does not exist or these credentials cannot see it."""


class GitHubCassetteMiss(GitHubError):
    """Replaying, no cassette holds this request. Apart from ``GitHubNotFound`` on purpose:
    a caller that reads 404 as "absent" must not read a missing recording as an answer."""


class GitHubUnavailable(GitHubError, ServiceUnavailableError):
    """GitHub answered 5xx, could not be reached, or limits us: worth trying again later."""

    def __init__(
        self, message: str, *, status: int | None = None, retry_after_s: float | None = None
    ) -> None:
        ServiceUnavailableError.__init__(self, message, retry_after_s=retry_after_s)
        self.status = status


class GitHubRateLimited(GitHubUnavailable):
    """Rate limited (403/429 with a limit): ``retry_after_s`` is when it resets."""


class GitHubTransportError(GitHubUnavailable):
    """No answer came back: the connection was refused, reset or timed out."""
