"""Every table of the database, on one ``MetaData``, at one schema revision.

The tables are created and changed only by the migrations in ``migration_evals.core.migrations``
(``migration-evals db upgrade``), never by ``create_all``: whichever command opens a
database first, it gets all of them. ``tests/core/test_migrations.py`` checks that the
migrations build exactly what is declared here.

The ledger's   ``meta``, ``runs``, ``ledger``, ``ledger_head``, ``trial_slots``
(``migration_evals.core.store``),
               ``record_log`` (``migration_evals.core.records``), ``ledger_checkpoints``
               (``migration_evals.core.checkpoints``)
the gate's     ``gate_snapshots`` (``migration_evals.core.snapshots``)
the trials'    ``artifacts`` (``migration_evals.core.artifacts``; a SQLite file keeps them in a
folder instead) the anchor's   ``gold`` (``migration_evals.core.gold``)
the miners'    ``tracked_prs``, ``retro_unlock``, ``retro_trials``
the App's      ``bot_deliveries``, ``bot_jobs``, ``bot_queue_guard``, ``bot_leases``,
               ``bot_check_runs``
the executor's ``run_budgets``

Times are ISO 8601 strings in UTC in the ledger's and the miners' tables (every backend
sorts them alike) and seconds since the epoch in the job tables (compared with a clock).
"""

from __future__ import annotations

import sqlalchemy as sa

__all__ = [
    "artifacts_table",
    "budgets_table",
    "check_runs_table",
    "deliveries_table",
    "gate_snapshots_table",
    "gold_table",
    "guard_table",
    "jobs_table",
    "leases_table",
    "ledger_checkpoints_table",
    "ledger_head_table",
    "ledger_table",
    "meta_table",
    "metadata",
    "record_log_table",
    "retro_trials_table",
    "retro_unlock_table",
    "runs_table",
    "tracked_prs_table",
    "trial_slots_table",
]

metadata = sa.MetaData()

# -- the ledger ---------------------------------------------------------------------------

# ``schema_version`` here is what releases before the migrations check on open (they
# refuse anything but 1); a migration that such a release could not work with raises it.
meta_table = sa.Table(
    "meta",
    metadata,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("value", sa.Text, nullable=False),
)

runs_table = sa.Table(
    "runs",
    metadata,
    sa.Column("run_id", sa.String(64), primary_key=True),
    sa.Column("started_at", sa.String(40), nullable=False),
    sa.Column("finished_at", sa.String(40)),
    # Revision 0006: 64, for every ``RunStatus`` (some are longer than 20).
    sa.Column("status", sa.String(64), nullable=False),
    sa.Column("options", sa.Text, nullable=False),
    sa.Column("summary", sa.Text),
    # Liveness (revision 0002): the process grading the run beats ``heartbeat_at``; older
    # than ``lease_s`` (or its ``pid`` gone on the same ``host``) and the run is dead.
    sa.Column("heartbeat_at", sa.String(40)),
    sa.Column("lease_s", sa.Float),
    sa.Column("pid", sa.Integer),
    sa.Column("host", sa.String(255)),
    sa.Column("resumed_at", sa.String(40)),
    sa.Index("ix_runs_status", "status"),
)

ledger_table = sa.Table(
    "ledger",
    metadata,
    sa.Column("seq", sa.BigInteger, primary_key=True, autoincrement=False),
    sa.Column("recorded_at", sa.String(40), nullable=False),
    sa.Column("run_id", sa.String(64), nullable=False, index=True),
    sa.Column("trial_id", sa.String(64), nullable=False, index=True),
    sa.Column("changeset_id", sa.String(200), nullable=False),
    sa.Column("model", sa.String(200), nullable=False),
    sa.Column("recipe", sa.String(200), nullable=False),
    sa.Column("tier", sa.String(20), nullable=False),
    sa.Column("verdict", sa.String(20), nullable=False),
    sa.Column("fabricated", sa.Boolean, nullable=False),
    sa.Column("cache_key", sa.String(64), nullable=False, index=True),
    sa.Column("payload", sa.Text, nullable=False),
    sa.Column("prev_hash", sa.String(64), nullable=False),
    sa.Column("row_hash", sa.String(64), nullable=False),
)

ledger_head_table = sa.Table(
    "ledger_head",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("seq", sa.BigInteger, nullable=False),
    sa.Column("row_hash", sa.String(64), nullable=False),
)

# Not part of the hash chain: an index of which trials are in the ledger, written in the
# same transaction as their envelopes.
trial_slots_table = sa.Table(
    "trial_slots",
    metadata,
    sa.Column("trial_id", sa.String(64), primary_key=True),
    sa.Column("run_id", sa.String(64), nullable=False, index=True),
    sa.Column("changeset_id", sa.String(200), nullable=False),
    sa.Column("seq", sa.BigInteger, nullable=False),
)

# The chain of the tables beside the ledger that the gate trusts (gold labels, tracked
# PRs, the retroactive unlock): each write appends the row as it now stands, linked under
# the ledger key, so a row written or edited without the key is caught
# (``migration_evals.core.records``).
record_log_table = sa.Table(
    "record_log",
    metadata,
    sa.Column("seq", sa.BigInteger, primary_key=True, autoincrement=False),
    sa.Column("recorded_at", sa.String(40), nullable=False),
    sa.Column("kind", sa.String(20), nullable=False),
    sa.Column("record_key", sa.String(400), nullable=False),
    sa.Column("content", sa.Text, nullable=False),
    sa.Column("prev_hash", sa.String(64), nullable=False),
    sa.Column("row_hash", sa.String(64), nullable=False),
)

# Signed statements of how far both chains reached at a moment
# (``migration_evals.core.checkpoints``).
ledger_checkpoints_table = sa.Table(
    "ledger_checkpoints",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("created_at", sa.String(40), nullable=False),
    sa.Column("ledger_seq", sa.BigInteger, nullable=False),
    sa.Column("ledger_hash", sa.String(64), nullable=False),
    sa.Column("records_seq", sa.BigInteger, nullable=False),
    sa.Column("records_hash", sa.String(64), nullable=False),
    sa.Column("key_id", sa.String(64), nullable=False),
    sa.Column("signer", sa.String(64), nullable=False),
    sa.Column("signature", sa.String(200), nullable=False),
)

# What the gate gathered from the rows up to a checkpoint, signed with the checkpoint key,
# so a check can start after that row (``migration_evals.core.snapshots``); only the newest is kept.
gate_snapshots_table = sa.Table(
    "gate_snapshots",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("created_at", sa.String(40), nullable=False),
    sa.Column("ledger_seq", sa.BigInteger, nullable=False),
    sa.Column("ledger_hash", sa.String(64), nullable=False),
    sa.Column("key_id", sa.String(64), nullable=False),
    sa.Column("form", sa.String(100), nullable=False),
    sa.Column("body", sa.LargeBinary, nullable=False),
    sa.Column("signer", sa.String(64), nullable=False),
    sa.Column("signature", sa.String(200), nullable=False),
)

# A trial's patch and sandbox output, gzip-compressed, named by the SHA-256 of the bytes
# kept (revision 0005; ``migration_evals.core.artifacts``). Not chained: envelopes name them by
# digest, and reading one back checks it against its name.
artifacts_table = sa.Table(
    "artifacts",
    metadata,
    sa.Column("sha256", sa.String(64), primary_key=True),
    sa.Column("kind", sa.String(20), nullable=False),
    sa.Column("size", sa.BigInteger, nullable=False),
    sa.Column("body", sa.LargeBinary, nullable=False),
)

# -- the gold anchor ------------------------------------------------------------------------

gold_table = sa.Table(
    "gold",
    metadata,
    sa.Column("repo", sa.String(300), primary_key=True),
    sa.Column("pr_number", sa.Integer, primary_key=True),
    sa.Column("changeset_id", sa.String(200)),
    sa.Column("model", sa.String(200)),
    sa.Column("label", sa.String(20), nullable=False),
    sa.Column("survival", sa.Float),
    sa.Column("evidence", sa.Text, nullable=False),
    sa.Column("computed_at", sa.String(40), nullable=False),
    sa.Column("funnel_verdict", sa.String(20)),
    sa.Column("trial_id", sa.String(64)),
)

# -- the miners -----------------------------------------------------------------------------

# Every agent PR the bot graded, with its latest merge state.
tracked_prs_table = sa.Table(
    "tracked_prs",
    metadata,
    sa.Column("repo", sa.String(300), primary_key=True),
    sa.Column("number", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("head_sha", sa.String(64), nullable=False),
    sa.Column("base_sha", sa.String(64), nullable=False),
    sa.Column("author", sa.String(200), nullable=False),
    sa.Column("is_agent", sa.Boolean, nullable=False),
    sa.Column("opened_at", sa.String(40), nullable=False),
    sa.Column("merged_at", sa.String(40)),
    sa.Column("closed_at", sa.String(40)),
    sa.Column("changeset_id", sa.String(200)),
    sa.Column("merge_commit_sha", sa.String(64)),
    sa.Column("last_checked_at", sa.String(40)),
    sa.Column("last_error", sa.Text),
)

# One row, written once: when retroactive scoring unlocked and which PRs earned it.
retro_unlock_table = sa.Table(
    "retro_unlock",
    metadata,
    # Always 1: the primary key is what makes the unlock impossible to record twice.
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("unlocked_at", sa.String(40), nullable=False),
    sa.Column("threshold", sa.Integer, nullable=False),
    sa.Column("window_days", sa.Integer, nullable=False),
    sa.Column("prs", sa.Text, nullable=False),
)

# Trials graded retroactively (historical changesets graded after the unlock).
retro_trials_table = sa.Table(
    "retro_trials",
    metadata,
    sa.Column("run_id", sa.String(64), primary_key=True),
    sa.Column("trial_id", sa.String(64), primary_key=True),
    sa.Column("changeset_id", sa.String(200), nullable=False),
    sa.Column("marked_at", sa.String(40), nullable=False),
)

# -- the durable job queue and the App's records --------------------------------------------

# One row per ``X-GitHub-Delivery``; a repeated delivery is a no-op.
deliveries_table = sa.Table(
    "bot_deliveries",
    metadata,
    sa.Column("delivery_id", sa.String(100), primary_key=True),
    sa.Column("event", sa.String(60), nullable=False),
    sa.Column("received_at", sa.Float, nullable=False),
    sa.Column("jobs", sa.Integer, nullable=False),
)

jobs_table = sa.Table(
    "bot_jobs",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("kind", sa.String(32), nullable=False),
    sa.Column("key", sa.String(500), nullable=False, unique=True),
    sa.Column("subject", sa.String(300), nullable=False, index=True),
    sa.Column("payload", sa.Text, nullable=False),
    sa.Column("state", sa.String(16), nullable=False, index=True),
    sa.Column("attempts", sa.Integer, nullable=False, default=0),
    sa.Column("max_attempts", sa.Integer, nullable=False),
    sa.Column("run_after", sa.Float, nullable=False),
    sa.Column("lease_until", sa.Float),
    sa.Column("leased_by", sa.String(120)),
    sa.Column("last_error", sa.Text),
    sa.Column("result", sa.Text),
    sa.Column("delivery_id", sa.String(100)),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("updated_at", sa.Float, nullable=False),
)

# One row locked by every lease decision (see the job queue).
guard_table = sa.Table(
    "bot_queue_guard",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
)

# Named, expiring locks (the one-scheduler lock).
leases_table = sa.Table(
    "bot_leases",
    metadata,
    sa.Column("name", sa.String(64), primary_key=True),
    sa.Column("holder", sa.String(120), nullable=False),
    sa.Column("expires_at", sa.Float, nullable=False),
)

# One row per check run the App published (repo, PR, head sha, mode).
check_runs_table = sa.Table(
    "bot_check_runs",
    metadata,
    sa.Column("external_id", sa.String(400), primary_key=True),
    sa.Column("repo", sa.String(200), nullable=False),
    sa.Column("number", sa.Integer, nullable=False),
    sa.Column("head_sha", sa.String(64), nullable=False),
    sa.Column("mode", sa.String(16), nullable=False),
    sa.Column("check_run_id", sa.BigInteger, nullable=False),
    sa.Column("status", sa.String(20), nullable=False),
    sa.Column("conclusion", sa.String(20)),
    sa.Column("run_id", sa.String(64)),
    sa.Column("trial_id", sa.String(64)),
    sa.Column("updated_at", sa.Float, nullable=False),
    sa.Index("ix_bot_check_runs_pr", "repo", "number"),
)

# -- the executor ---------------------------------------------------------------------------

# A run's budget, shared by every worker grading the run.
budgets_table = sa.Table(
    "run_budgets",
    metadata,
    sa.Column("run_id", sa.String(64), primary_key=True),
    sa.Column("limit_usd", sa.Float, nullable=False),
    sa.Column("spent_usd", sa.Float, nullable=False),
    sa.Column("exhausted", sa.Boolean, nullable=False),
)
