"""Every environment variable ``migration_evals.bot.settings`` reads, with the setting it fills and
what it means: the settings reference page is generated from this table and the defaults of
``migration_evals.core.settings`` (``scripts/gen_docs.py``), and it refuses to generate while a
variable read is missing here or one listed here is no longer read, so the page cannot drift.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["VARIABLES", "Variable"]


@dataclass(frozen=True, slots=True)
class Variable:
    """One variable. ``setting`` is the dotted path of the ``Settings`` attribute it fills
    (None: it fills none directly); ``default`` says the default in words where it depends
    on the machine (None: the page shows the attribute's value when nothing is set)."""

    name: str
    group: str
    meaning: str
    setting: str | None = None
    default: str | None = None


_GRADING = "Grading"
_REGISTRIES = "Sandbox, images and registries"
_SCALE = "Many machines (Celery executor)"
_LEDGER = "Ledger keys"
_GITHUB = "GitHub: mining and the App"
_RETIRED = "No longer read"

VARIABLES: tuple[Variable, ...] = (
    Variable(
        "MIGRATION_EVALS_DB_URL",
        _GRADING,
        "the ledger's database, any SQLAlchemy URL (`postgresql+psycopg://user:pw@host/db`); "
        "`--db` overrides it",
        "db_url",
    ),
    Variable(
        "MIGRATION_EVALS_SPECS_DIR",
        _GRADING,
        "the specs directory (oracle spec, recipes, hypotheses, models); `--specs` overrides it",
        "specs_dir",
        default="the project's `specs/`",
    ),
    Variable(
        "MIGRATION_EVALS_CASSETTES_DIR",
        _GRADING,
        "the cassette directory; `--cassettes` overrides it",
        "cassette_dir",
        default="the project's `cassettes/`",
    ),
    Variable(
        "MIGRATION_EVALS_CACHE_DIR",
        _GRADING,
        "clones, snapshots, live baselines and resolutions, dependency caches, image builds; "
        "`--cache-dir` overrides it",
        "cache_dir",
        default="`$XDG_CACHE_HOME/migration-evals` (`~/.cache/migration-evals`)",
    ),
    Variable(
        "XDG_CACHE_HOME",
        _GRADING,
        "the base of the default cache directory",
        default="`~/.cache`",
    ),
    Variable(
        "MIGRATION_EVALS_SCRATCH_DIR",
        _GRADING,
        "where tier 1 writes its short-lived apply trees",
        "scratch_dir",
        default="a RAM-backed folder (`/dev/shm`) when the system has a writable one, "
        "else the system's temporary folder",
    ),
    Variable(
        "MIGRATION_EVALS_MODE",
        _GRADING,
        "how ports with cassettes behave: `replay`, `record` or `live`; `--mode` overrides it. "
        "`serve` and `worker` default to `live` when it is not set",
        "mode",
    ),
    Variable(
        "MIGRATION_EVALS_SANDBOX_MODE",
        _GRADING,
        "the sandbox port's mode alone (e.g. record sandbox runs while the judges replay); "
        "`--sandbox` overrides it",
        "sandbox_mode",
        default="the mode (the demo: live when a Docker engine with the images answers)",
    ),
    Variable(
        "MIGRATION_EVALS_JOBS",
        _GRADING,
        "trials graded in parallel (a positive integer); `--jobs` overrides it",
        "jobs",
    ),
    Variable(
        "MIGRATION_EVALS_HEARTBEAT_SECONDS",
        _GRADING,
        "seconds between a grading run's heartbeats; its lease is three beats, after which "
        "another command marks it interrupted",
        "heartbeat_s",
    ),
    Variable(
        "ANTHROPIC_API_KEY",
        _GRADING,
        "the primary (Claude) judge's key, needed in `record` and `live` mode; never written "
        "to cassettes, envelopes or error messages",
        "anthropic_api_key",
    ),
    Variable(
        "OPENAI_API_KEY",
        _GRADING,
        "the secondary judge's key, needed with `--strict` in `record` and `live` mode",
        "openai_api_key",
    ),
    Variable(
        "ANTHROPIC_BASE_URL",
        _GRADING,
        "points the Anthropic SDK at a gateway",
        "anthropic_base_url",
        default="the SDK's own endpoint",
    ),
    Variable(
        "OPENAI_BASE_URL",
        _GRADING,
        "points the OpenAI SDK at a gateway",
        "openai_base_url",
        default="the SDK's own endpoint",
    ),
    Variable(
        "DOCKER_HOST",
        _REGISTRIES,
        "the Docker engine of tiers 2 and 3 (a remote engine or Podman's Docker API work too)",
        "docker_host",
        default="the local socket, `unix:///var/run/docker.sock`",
    ),
    Variable(
        "MIGRATION_EVALS_MAVEN_MIRROR",
        _REGISTRIES,
        "the registry every Maven repository resolves through (credentials may be in the URL; "
        "they stay with the harness)",
        "dependencies.maven_mirror",
    ),
    Variable(
        "MIGRATION_EVALS_GOPROXY",
        _REGISTRIES,
        "the Go module proxy: modules, the checksum database's proofs, Go releases; also "
        "`images build`",
        "dependencies.goproxy",
    ),
    Variable(
        "MIGRATION_EVALS_DEPS_OFFLINE",
        _REGISTRIES,
        "`on` resolves from the dependency cache alone; a miss is an `error`",
        "dependencies.offline",
    ),
    Variable(
        "MIGRATION_EVALS_CACHE_VOLUMES",
        _REGISTRIES,
        "`on` keeps the caches in named volumes, for an engine that cannot see this "
        "machine's folders (a worker in a container, a remote engine)",
        "dependencies.cache_volumes",
    ),
    Variable(
        "MIGRATION_EVALS_GATE_NETWORK",
        _REGISTRIES,
        "the network resolution runs join to reach the registry gate, with such an engine",
        "dependencies.gate_network",
    ),
    Variable(
        "MIGRATION_EVALS_GATE_HOST",
        _REGISTRIES,
        "the registry gate's address on that network",
        "dependencies.gate_host",
        default="that network's gateway address",
    ),
    Variable(
        "MIGRATION_EVALS_IMAGE_REGISTRY",
        _REGISTRIES,
        "a registry (`host[:port][/prefix]`) to pull the base images of Dockerfile builds "
        "from, by digest, when the engine lacks them; unset, a missing image is an `error`",
        "image_registry",
    ),
    Variable(
        "MIGRATION_EVALS_APT_MIRROR",
        _REGISTRIES,
        "the Debian mirror `images build` uses",
        "apt_mirror",
        default="the mirror in `/etc/apt/sources.list*`",
    ),
    Variable(
        "MIGRATION_EVALS_EXECUTOR",
        _SCALE,
        "`embedded` grades on this process's threads, `celery` on `migration-evals worker` "
        "processes; `--executor` overrides it",
        "scale.executor",
    ),
    Variable(
        "MIGRATION_EVALS_BROKER_URL",
        _SCALE,
        "the Celery broker (Redis); `--broker` overrides it",
        "scale.broker_url",
    ),
    Variable(
        "MIGRATION_EVALS_QUEUE",
        _SCALE,
        "prefix of the broker queues (`<prefix>.trials`, `<prefix>.bot`, `<prefix>.comments`); "
        "lets several setups share one Redis",
        "scale.queue",
    ),
    Variable(
        "MIGRATION_EVALS_TRIAL_LEASE_SECONDS",
        _SCALE,
        "how long a worker may go silent on a job before it is run elsewhere (renewed every third)",
        "scale.lease_s",
    ),
    Variable(
        "MIGRATION_EVALS_REDISPATCH_SECONDS",
        _SCALE,
        "how long a ready job may wait unannounced before it is announced again",
        "scale.redispatch_s",
    ),
    Variable(
        "MIGRATION_EVALS_TRIAL_MAX_ATTEMPTS",
        _SCALE,
        "attempts before a trial job gives up (the trial is then an infrastructure error)",
        "scale.max_attempts",
    ),
    Variable(
        "MIGRATION_EVALS_LEDGER_KEY",
        _LEDGER,
        "the secret (at least 16 characters, e.g. `openssl rand -hex 32`) the ledger's chain "
        "is HMAC-SHA256-linked under; unset, the ledger is unkeyed and every command that "
        "writes or verifies it warns. The same on every process that writes the ledger",
        "ledger.key",
    ),
    Variable(
        "MIGRATION_EVALS_LEDGER_KEY_FILE",
        _LEDGER,
        "a file holding the ledger key (a container secret such as `/run/secrets/ledger-key`), "
        "read when MIGRATION_EVALS_LEDGER_KEY is unset",
        default="none",
    ),
    Variable(
        "MIGRATION_EVALS_CHECKPOINT_KEY",
        _LEDGER,
        "the Ed25519 private key PEM file that signs checkpoints, gate snapshots and anchors "
        "(`openssl genpkey -algorithm ed25519 -out checkpoint.pem`); a file named here must "
        "exist. Unset, the default key is used, made on first use with its public half "
        "printed; `off` signs nothing. Keep it outside the database, the same on every "
        "process that writes the ledger",
        "ledger.checkpoint_key",
        default="`$XDG_CONFIG_HOME/migration-evals/checkpoint-key.pem` "
        "(`~/.config/migration-evals/checkpoint-key.pem`), made on first use",
    ),
    Variable(
        "MIGRATION_EVALS_CHECKPOINT_PUBLIC_KEY",
        _LEDGER,
        "the public key PEM file that verifies them where the private key is not at hand "
        "(`ledger checkpoint --public-key` prints it)",
        "ledger.checkpoint_public_key",
        default="the private key's public half",
    ),
    Variable(
        "XDG_CONFIG_HOME",
        _LEDGER,
        "the base of the default checkpoint key's folder",
        default="`~/.config`",
    ),
    Variable(
        "MIGRATION_EVALS_GITHUB_API_URL",
        _GITHUB,
        "the GitHub API's base URL (GitHub Enterprise: `https://HOST/api/v3`)",
        "github_app.api_url",
    ),
    Variable(
        "MIGRATION_EVALS_GITHUB_TOKEN",
        _GITHUB,
        "a token for mining from the API (without one GitHub allows 60 requests an hour); "
        "never written to cassettes",
        "github_token",
    ),
    Variable(
        "MIGRATION_EVALS_GITHUB_REQUEST_INTERVAL",
        _GITHUB,
        "seconds between mining's requests to the live API (`0`: no pause)",
        "github_request_interval_s",
    ),
    Variable(
        "MIGRATION_EVALS_AGENT_AUTHORS",
        _GITHUB,
        "the pull-request authors that are agents, beside `specs/agents.yaml`: "
        "`login=model,login2` (mining from git alone matches git names and emails too)",
        "agent_authors",
    ),
    Variable(
        "MIGRATION_EVALS_APP_ID",
        _GITHUB,
        "the App's numeric id (required to serve)",
        "github_app.app_id",
    ),
    Variable(
        "MIGRATION_EVALS_PRIVATE_KEY_PATH",
        _GITHUB,
        "path of the App's private key `.pem` (required to serve)",
        "github_app.private_key_path",
    ),
    Variable(
        "MIGRATION_EVALS_WEBHOOK_SECRET",
        _GITHUB,
        "the App's webhook secret (required to serve)",
        "github_app.webhook_secret",
    ),
    Variable(
        "MIGRATION_EVALS_APP_SLUG",
        _GITHUB,
        "the App's slug, for `@slug command` and ignoring its own comments",
        "github_app.app_slug",
    ),
    Variable(
        "MIGRATION_EVALS_PUBLIC_URL",
        _GITHUB,
        "the App's public base URL (`https://host`); check runs then link to `/trials/<id>`",
        "github_app.public_url",
    ),
    Variable(
        "MIGRATION_EVALS_BOT_WORKERS",
        _GITHUB,
        "job worker threads per server process",
        "github_app.workers",
    ),
    Variable(
        "MIGRATION_EVALS_BOT_ANNOUNCE_WORKERS",
        _GITHUB,
        "threads per server process that only open check runs in progress, before grading",
        "github_app.announce_workers",
    ),
    Variable(
        "MIGRATION_EVALS_JOB_LEASE_SECONDS",
        _GITHUB,
        "an App job's lease, renewed while it runs",
        "github_app.job_lease_s",
    ),
    Variable(
        "MIGRATION_EVALS_JOB_MAX_ATTEMPTS",
        _GITHUB,
        "attempts before an App job ends `failed`",
        "github_app.job_max_attempts",
    ),
    Variable(
        "MIGRATION_EVALS_JOB_RETRY_SECONDS",
        _GITHUB,
        "when GitHub or a judge API is down or rate limited, a job is put back (never waited "
        "for in a worker thread) after a backoff with jitter starting near this many seconds, "
        "and no sooner than a `Retry-After` or rate-limit reset asks",
        "github_app.job_retry_s",
    ),
    Variable(
        "MIGRATION_EVALS_JOB_RETRY_MAX_SECONDS",
        _GITHUB,
        "the backoff doubles up to this many seconds",
        "github_app.job_retry_max_s",
    ),
    Variable(
        "MIGRATION_EVALS_GITHUB_WRITE_INTERVAL",
        _GITHUB,
        "seconds between writes to one installation",
        "github_app.write_interval_s",
    ),
    Variable(
        "MIGRATION_EVALS_SCHEDULER",
        _GITHUB,
        "`on`/`off`: the nightly survival pass and the reconciliation pass",
        "github_app.scheduler",
    ),
    Variable(
        "MIGRATION_EVALS_SURVIVAL_CRON",
        _GITHUB,
        "nightly survival mining, a crontab line in UTC",
        "github_app.survival_cron",
    ),
    Variable(
        "MIGRATION_EVALS_RECONCILE_MINUTES",
        _GITHUB,
        "interval of the pass that enqueues open agent PRs with no check on their head",
        "github_app.reconcile_minutes",
    ),
    Variable(
        "MIGRATION_EVALS_GITHUB_MAX_RETRIES",
        _RETIRED,
        "refused with an error: use `MIGRATION_EVALS_JOB_MAX_ATTEMPTS`",
    ),
    Variable(
        "MIGRATION_EVALS_GITHUB_MAX_RETRY_WAIT",
        _RETIRED,
        "refused with an error: use `MIGRATION_EVALS_JOB_RETRY_MAX_SECONDS`",
    ),
)
