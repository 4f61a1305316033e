"""The one frozen settings object. Built in ``bot/`` (from the environment and the command
line) and passed down; nothing below ``bot/`` reads the environment itself."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path

from migration_evals.core.liveness import DEFAULT_HEARTBEAT_S

__all__ = [
    "MINING_REQUEST_INTERVAL_S",
    "CassetteMode",
    "DependencySettings",
    "Executor",
    "GitHubAppSettings",
    "LedgerKeySettings",
    "ScaleSettings",
    "Settings",
]


MINING_REQUEST_INTERVAL_S = 0.25  # between mining's requests to the live GitHub API


class CassetteMode(StrEnum):
    """How ports with cassettes behave: replay recordings, record live calls, or go live."""

    REPLAY = "replay"
    RECORD = "record"
    LIVE = "live"


class Executor(StrEnum):
    """Where trials and bot jobs run: threads of this process, or Celery workers."""

    EMBEDDED = "embedded"
    CELERY = "celery"


@dataclass(frozen=True, slots=True)
class ScaleSettings:
    """The Celery executor: its broker and how long a worker may go silent on a job.

    The database stays the source of truth; the broker only says "job N is ready". A job
    whose worker stops renewing its lease for ``lease_s`` is run again elsewhere, and a
    ready job nobody took within ``redispatch_s`` is announced again.
    """

    executor: Executor = Executor.EMBEDDED
    broker_url: str = "redis://127.0.0.1:6379/0"
    queue: str = "migration-evals"  # prefix of the broker queues (one Redis, several setups)
    lease_s: float = 120.0
    redispatch_s: float = 60.0
    max_attempts: int = 3


@dataclass(frozen=True, slots=True)
class DependencySettings:
    """Where dependency resolution fetches from, before the network-less build.

    Every remote repository a Maven build names goes through ``maven_mirror``, every Go
    module through ``goproxy``; both may carry credentials in the URL, which stay with
    the harness (never in a container, a cassette or a log). ``offline`` fetches nothing:
    only what the dependency cache already holds.
    """

    maven_mirror: str = field(default="https://repo.maven.apache.org/maven2", repr=False)
    goproxy: str = field(default="https://proxy.golang.org", repr=False)
    offline: bool = False
    # For an engine that cannot see the harness's folders (a worker in a container, a
    # remote engine): caches in named volumes, and resolution runs joining ``gate_network``
    # to reach the gate at ``gate_host`` (default: that network's gateway address).
    cache_volumes: bool = False
    gate_network: str | None = None
    gate_host: str | None = None


@dataclass(frozen=True, slots=True)
class LedgerKeySettings:
    """The ledger's keys: the MAC key its chain is linked under (None: unkeyed, plain
    SHA-256) and the Ed25519 keys that sign and verify its checkpoints (PEM files)."""

    key: str | None = field(default=None, repr=False)
    checkpoint_key: Path | None = None  # private: signs checkpoints
    # Make ``checkpoint_key`` on first use when the file is missing (the default key, kept
    # outside the database so that whoever can write the database cannot re-sign it).
    make_checkpoint_key: bool = False
    checkpoint_public_key: Path | None = None  # public: verifies them (default: the private's)


@dataclass(frozen=True, slots=True)
class GitHubAppSettings:
    """The GitHub App side of a server: identity, secrets, the API, job and scheduler knobs."""

    app_id: int | None = None
    private_key_path: Path | None = None
    webhook_secret: str | None = field(default=None, repr=False)
    api_url: str = "https://api.github.com"
    app_slug: str = "migration-evals"
    workers: int = 2  # in-process job worker threads per server process
    # Threads that only open check runs in progress (``announce`` jobs), beside ``workers``,
    # so a burst of pull requests sees its check runs while earlier ones are graded.
    announce_workers: int = 4
    job_lease_s: float = 300.0
    job_max_attempts: int = 5
    write_interval_s: float = 1.0  # pause between writes to one installation
    # A job whose API was unavailable is put back after a backoff from ``job_retry_s``,
    # doubling up to ``job_retry_max_s`` (or later, when the API named a later time).
    job_retry_s: float = 10.0
    job_retry_max_s: float = 600.0
    scheduler: bool = True
    survival_cron: str = "17 3 * * *"
    reconcile_minutes: int = 30
    # Where the App is reached from outside (``https://host``): check runs link to its
    # trial pages. None: no details link.
    public_url: str | None = None


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything configurable about a run or a server, resolved once."""

    specs_dir: Path
    cassette_dir: Path
    cache_dir: Path
    db_url: str = "sqlite:///./migration-evals.db"
    mode: CassetteMode = CassetteMode.REPLAY
    # The sandbox port's own mode; None follows ``mode`` (the demo picks live or replay
    # itself, depending on whether a Docker engine with the images is reachable).
    sandbox_mode: CassetteMode | None = None
    jobs: int = 1
    budget_usd: float | None = None
    strict_judge: bool = False
    # Secrets and service locations for the live adapters; never written to cassettes.
    anthropic_api_key: str | None = field(default=None, repr=False)
    openai_api_key: str | None = field(default=None, repr=False)
    anthropic_base_url: str | None = None  # None: the SDK's own default endpoint
    openai_base_url: str | None = None
    docker_host: str | None = None
    github_app: GitHubAppSettings = field(default_factory=GitHubAppSettings)
    # Mining: a token for the GitHub REST API (its root is github_app.api_url) and which
    # pull-request authors are agents (login -> model id, "" if unknown).
    github_token: str | None = field(default=None, repr=False)
    # Mining's requests to the live API, this far apart (0: none): politeness, not a limit.
    github_request_interval_s: float = MINING_REQUEST_INTERVAL_S
    agent_authors: Mapping[str, str] = field(default_factory=dict)
    scale: ScaleSettings = field(default_factory=ScaleSettings)
    dependencies: DependencySettings = field(default_factory=DependencySettings)
    ledger: LedgerKeySettings = field(default_factory=LedgerKeySettings)
    apt_mirror: str | None = None  # for building images; default: the host's apt sources
    # Where the base images of Dockerfile builds are pulled from, by digest, when the engine
    # lacks them (host[:port][/prefix]; Docker Hub images go through it). None: no pulls.
    image_registry: str | None = None
    scratch_dir: Path | None = None  # tier 1's short-lived apply trees; None: system temp
    # How often a grading process beats its run's heartbeat; the run's lease is a few
    # beats (``migration_evals.core.liveness``), after which another command marks it interrupted.
    heartbeat_s: float = DEFAULT_HEARTBEAT_S

    @property
    def effective_sandbox_mode(self) -> CassetteMode:
        return self.sandbox_mode or self.mode

    def with_overrides(self, **changes: object) -> Settings:
        return replace(self, **changes)  # type: ignore[arg-type]
