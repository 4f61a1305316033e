"""Building the one ``Settings`` object from the environment and command-line overrides.

Variables are prefixed ``MIGRATION_EVALS_``; judge keys and endpoints use the SDKs' own
names (``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY``, ``ANTHROPIC_BASE_URL``,
``OPENAI_BASE_URL``); ``DOCKER_HOST`` as the docker SDK reads it.
``MIGRATION_EVALS_AGENT_AUTHORS`` lists the pull-request authors that are agents, comma
separated, each optionally with the model it runs: ``codex-bot[bot]=gpt-5,fixer-bot``;
mining from git alone matches them against commit names and emails too.
``MIGRATION_EVALS_SANDBOX_MODE`` sets the sandbox port apart from the others (e.g. record
sandbox runs while the judges replay). ``MIGRATION_EVALS_MAVEN_MIRROR`` and
``MIGRATION_EVALS_GOPROXY`` name the registries dependency resolution uses (credentials may
be in the URL), ``MIGRATION_EVALS_DEPS_OFFLINE=on`` uses only the dependency cache; for an
engine that cannot see this machine's folders, ``MIGRATION_EVALS_CACHE_VOLUMES=on`` keeps the
caches in named volumes and ``MIGRATION_EVALS_GATE_NETWORK`` (with
``MIGRATION_EVALS_GATE_HOST``) is how resolution runs reach the registry gate.
``MIGRATION_EVALS_LEDGER_KEY`` is the secret the ledger's chain is linked under (HMAC-SHA256;
unset: an unkeyed ledger; ``MIGRATION_EVALS_LEDGER_KEY_FILE`` reads it from a file instead),
``MIGRATION_EVALS_CHECKPOINT_KEY`` the Ed25519 private key PEM
that signs checkpoints (unset: ``checkpoint-key.pem`` in the user's configuration folder,
made on first use; ``off``: none) and ``MIGRATION_EVALS_CHECKPOINT_PUBLIC_KEY`` the public
key PEM that verifies them where the private key is not at hand.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

from migration_evals.core.errors import ConfigError
from migration_evals.core.liveness import DEFAULT_HEARTBEAT_S
from migration_evals.core.settings import (
    MINING_REQUEST_INTERVAL_S,
    CassetteMode,
    DependencySettings,
    Executor,
    GitHubAppSettings,
    LedgerKeySettings,
    ScaleSettings,
    Settings,
)

__all__ = [
    "PROJECT_ROOT",
    "default_checkpoint_key",
    "dependencies_from_env",
    "github_app_from_env",
    "ledger_keys_from_env",
    "mode_is_set",
    "scale_from_env",
    "settings_from_env",
]

PROJECT_ROOT = Path(__file__).resolve().parents[2]
PREFIX = "MIGRATION_EVALS_"


def _default_cache_dir(env: Mapping[str, str]) -> Path:
    base = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "migration-evals"


def _mode(value: str, name: str = "MODE") -> CassetteMode:
    try:
        return CassetteMode(value)
    except ValueError:
        choices = ", ".join(m.value for m in CassetteMode)
        raise ConfigError(f"{PREFIX}{name}={value!r} is not one of {choices}") from None


def _sandbox_mode(env: Mapping[str, str]) -> CassetteMode | None:
    """An explicit sandbox mode, else an explicit general mode, else None (decide later)."""
    for name in ("SANDBOX_MODE", "MODE"):
        if env.get(PREFIX + name):
            return _mode(env[PREFIX + name], name)
    return None


def _jobs(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise ConfigError(f"{PREFIX}JOBS={value!r} must be a positive integer")
    return int(value)


def _number(env: Mapping[str, str], name: str, default: float, *, integer: bool = False) -> float:
    raw = env.get(PREFIX + name)
    if not raw:
        return default
    try:
        value = int(raw) if integer else float(raw)
    except ValueError:
        kind = "an integer" if integer else "a number"
        raise ConfigError(f"{PREFIX}{name}={raw!r} must be {kind}") from None
    if value < 0:
        raise ConfigError(f"{PREFIX}{name}={raw!r} must not be negative")
    return value


def _flag(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = (env.get(PREFIX + name) or "").strip().lower()
    if not raw:
        return default
    if raw in ("1", "true", "yes", "on"):
        return True
    if raw in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"{PREFIX}{name}={raw!r} must be on or off")


_RETIRED = {
    "GITHUB_MAX_RETRIES": "JOB_MAX_ATTEMPTS",
    "GITHUB_MAX_RETRY_WAIT": "JOB_RETRY_MAX_SECONDS",
}


def _refuse_retired(env: Mapping[str, str]) -> None:
    """A variable that no longer means anything must not be silently ignored."""
    for old, new in _RETIRED.items():
        if env.get(PREFIX + old):
            raise ConfigError(
                f"{PREFIX}{old} is no longer read: the App no longer waits for GitHub in "
                f"process, it puts the job back; use {PREFIX}{new} instead"
            )


def github_app_from_env(env: Mapping[str, str]) -> GitHubAppSettings:
    """The GitHub App settings; missing identity is only an error when serving."""
    defaults = GitHubAppSettings()
    _refuse_retired(env)
    app_id = env.get(PREFIX + "APP_ID")
    if app_id is not None and not app_id.isdigit():
        raise ConfigError(f"{PREFIX}APP_ID={app_id!r} must be the App's numeric id")
    key_path = env.get(PREFIX + "PRIVATE_KEY_PATH")
    return GitHubAppSettings(
        app_id=int(app_id) if app_id else None,
        private_key_path=Path(key_path) if key_path else None,
        webhook_secret=env.get(PREFIX + "WEBHOOK_SECRET") or None,
        api_url=(env.get(PREFIX + "GITHUB_API_URL") or defaults.api_url).rstrip("/"),
        app_slug=env.get(PREFIX + "APP_SLUG") or defaults.app_slug,
        workers=int(_number(env, "BOT_WORKERS", defaults.workers, integer=True)),
        announce_workers=int(
            _number(env, "BOT_ANNOUNCE_WORKERS", defaults.announce_workers, integer=True)
        ),
        job_lease_s=_number(env, "JOB_LEASE_SECONDS", defaults.job_lease_s),
        job_max_attempts=int(
            _number(env, "JOB_MAX_ATTEMPTS", defaults.job_max_attempts, integer=True)
        ),
        write_interval_s=_number(env, "GITHUB_WRITE_INTERVAL", defaults.write_interval_s),
        job_retry_s=_number(env, "JOB_RETRY_SECONDS", defaults.job_retry_s),
        job_retry_max_s=_number(env, "JOB_RETRY_MAX_SECONDS", defaults.job_retry_max_s),
        scheduler=_flag(env, "SCHEDULER", defaults.scheduler),
        survival_cron=env.get(PREFIX + "SURVIVAL_CRON") or defaults.survival_cron,
        reconcile_minutes=int(
            _number(env, "RECONCILE_MINUTES", defaults.reconcile_minutes, integer=True)
        ),
        public_url=_public_url(env.get(PREFIX + "PUBLIC_URL")),
    )


def _public_url(value: str | None) -> str | None:
    """The App's public base URL (check runs link to its trial pages), or None."""
    if not value:
        return None
    parsed = urlsplit(value)
    if parsed.scheme not in ("http", "https") or not parsed.netloc or parsed.query:
        raise ConfigError(
            f"{PREFIX}PUBLIC_URL={value!r} must be the App's http(s) base URL, "
            "like https://evals.example.com (no query)"
        )
    return value.rstrip("/")


def executor(value: str, source: str) -> Executor:
    """An ``Executor`` named by ``source`` (a variable or an option), or a clear error."""
    try:
        return Executor(value)
    except ValueError:
        choices = ", ".join(e.value for e in Executor)
        raise ConfigError(f"{source}={value!r} is not one of {choices}") from None


def scale_from_env(env: Mapping[str, str]) -> ScaleSettings:
    """The executor, the Celery broker and the job lease of trial jobs."""
    defaults = ScaleSettings()
    lease = _number(env, "TRIAL_LEASE_SECONDS", defaults.lease_s)
    redispatch = _number(env, "REDISPATCH_SECONDS", defaults.redispatch_s)
    for name, value in (("TRIAL_LEASE_SECONDS", lease), ("REDISPATCH_SECONDS", redispatch)):
        if value <= 0:
            raise ConfigError(f"{PREFIX}{name} must be positive")
    return ScaleSettings(
        executor=executor(env.get(PREFIX + "EXECUTOR") or defaults.executor, PREFIX + "EXECUTOR"),
        broker_url=env.get(PREFIX + "BROKER_URL") or defaults.broker_url,
        queue=env.get(PREFIX + "QUEUE") or defaults.queue,
        lease_s=lease,
        redispatch_s=redispatch,
        max_attempts=max(
            1, int(_number(env, "TRIAL_MAX_ATTEMPTS", defaults.max_attempts, integer=True))
        ),
    )


def _registry_url(env: Mapping[str, str], name: str, default: str) -> str:
    value = (env.get(PREFIX + name) or default).rstrip("/")
    if not value.startswith(("https://", "http://")):
        raise ConfigError(f"{PREFIX}{name} must be an http(s) URL")
    return value


def dependencies_from_env(env: Mapping[str, str]) -> DependencySettings:
    """The registries dependency resolution uses, and whether it may use them at all."""
    defaults = DependencySettings()
    return DependencySettings(
        maven_mirror=_registry_url(env, "MAVEN_MIRROR", defaults.maven_mirror),
        goproxy=_registry_url(env, "GOPROXY", defaults.goproxy),
        offline=_flag(env, "DEPS_OFFLINE", defaults.offline),
        cache_volumes=_flag(env, "CACHE_VOLUMES", defaults.cache_volumes),
        gate_network=env.get(PREFIX + "GATE_NETWORK") or None,
        gate_host=env.get(PREFIX + "GATE_HOST") or None,
    )


LEDGER_KEY_MIN_CHARS = 16


def ledger_keys_from_env(env: Mapping[str, str]) -> LedgerKeySettings:
    """The ledger key and the checkpoint key files (read when the store is opened)."""
    key = env.get(PREFIX + "LEDGER_KEY") or _ledger_key_file(env)
    if key is not None and len(key) < LEDGER_KEY_MIN_CHARS:
        raise ConfigError(
            f"{PREFIX}LEDGER_KEY is {len(key)} character(s) long: use at least "
            f"{LEDGER_KEY_MIN_CHARS} random ones (e.g. `openssl rand -hex 32`)"
        )
    private = env.get(PREFIX + "CHECKPOINT_KEY") or ""
    public = env.get(PREFIX + "CHECKPOINT_PUBLIC_KEY")
    if private.lower() == CHECKPOINT_KEY_OFF:
        checkpoint_key = None
    else:
        checkpoint_key = Path(private) if private else default_checkpoint_key(env)
    return LedgerKeySettings(
        key=key,
        checkpoint_key=checkpoint_key,
        # Only the default is made on first use: a path someone named and mistyped is an
        # error, not a new key that signs where the right one should have.
        make_checkpoint_key=not private,
        checkpoint_public_key=Path(public) if public else None,
    )


def _ledger_key_file(env: Mapping[str, str]) -> str | None:
    """The ledger key read from ``MIGRATION_EVALS_LEDGER_KEY_FILE`` (a container secret),
    surrounding whitespace dropped; None when the variable is unset."""
    name = env.get(PREFIX + "LEDGER_KEY_FILE")
    if not name:
        return None
    try:
        return Path(name).read_text(encoding="utf-8").strip() or None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{PREFIX}LEDGER_KEY_FILE: cannot read {name}: {exc}") from exc


CHECKPOINT_KEY_OFF = "off"


def default_checkpoint_key(env: Mapping[str, str]) -> Path:
    """Where the checkpoint key is kept when none is named: the user's configuration
    folder, outside any database it signs for."""
    base = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "migration-evals" / "checkpoint-key.pem"


def _agent_authors(value: str) -> dict[str, str]:
    authors: dict[str, str] = {}
    for item in value.split(","):
        login, _, model = (part.strip() for part in item.strip().partition("="))
        if not login:
            if item.strip():
                raise ConfigError(f"{PREFIX}AGENT_AUTHORS: {item.strip()!r} names no author")
            continue
        authors[login] = model
    return authors


RAM_FOLDER = Path("/dev/shm")  # noqa: S108 - apply trees are made there by mkdtemp (0700)


def default_scratch_dir(env: Mapping[str, str]) -> Path | None:
    """Where tier 1 writes its apply trees: ``MIGRATION_EVALS_SCRATCH_DIR``, else a
    RAM-backed folder when the system has a writable one, else the system temp folder."""
    chosen = env.get(PREFIX + "SCRATCH_DIR")
    if chosen:
        return Path(chosen)
    if RAM_FOLDER.is_dir() and os.access(RAM_FOLDER, os.W_OK | os.X_OK):
        return RAM_FOLDER
    return None


def mode_is_set(env: Mapping[str, str] | None = None) -> bool:
    """Whether ``MIGRATION_EVALS_MODE`` is given (servers default to live without it)."""
    env = os.environ if env is None else env
    return bool(env.get(PREFIX + "MODE"))


def settings_from_env(env: Mapping[str, str] | None = None) -> Settings:
    """Settings from ``env`` (default: the process environment)."""
    env = os.environ if env is None else env

    def get(name: str, default: str) -> str:
        return env.get(PREFIX + name) or default

    return Settings(
        specs_dir=Path(get("SPECS_DIR", str(PROJECT_ROOT / "specs"))),
        cassette_dir=Path(get("CASSETTES_DIR", str(PROJECT_ROOT / "cassettes"))),
        cache_dir=Path(get("CACHE_DIR", str(_default_cache_dir(env)))),
        db_url=get("DB_URL", "sqlite:///./migration-evals.db"),
        scratch_dir=default_scratch_dir(env),
        mode=_mode(get("MODE", CassetteMode.REPLAY.value)),
        sandbox_mode=_sandbox_mode(env),
        jobs=_jobs(get("JOBS", "1")),
        anthropic_api_key=env.get("ANTHROPIC_API_KEY") or None,
        openai_api_key=env.get("OPENAI_API_KEY") or None,
        anthropic_base_url=env.get("ANTHROPIC_BASE_URL") or None,
        openai_base_url=env.get("OPENAI_BASE_URL") or None,
        docker_host=env.get("DOCKER_HOST") or None,
        github_app=github_app_from_env(env),
        github_token=env.get(PREFIX + "GITHUB_TOKEN") or None,
        github_request_interval_s=_number(
            env, "GITHUB_REQUEST_INTERVAL", MINING_REQUEST_INTERVAL_S
        ),
        agent_authors=_agent_authors(get("AGENT_AUTHORS", "")),
        apt_mirror=env.get(PREFIX + "APT_MIRROR") or None,
        image_registry=env.get(PREFIX + "IMAGE_REGISTRY") or None,
        scale=scale_from_env(env),
        dependencies=dependencies_from_env(env),
        heartbeat_s=_heartbeat(env),
        ledger=ledger_keys_from_env(env),
    )


def _heartbeat(env: Mapping[str, str]) -> float:
    seconds = _number(env, "HEARTBEAT_SECONDS", DEFAULT_HEARTBEAT_S)
    if seconds <= 0:
        raise ConfigError(f"{PREFIX}HEARTBEAT_SECONDS must be positive (seconds between beats)")
    return seconds
