"""Baseline: every table as the last release before migrations had them, in one schema.

Adopts a database that release made (its tables present, no revision): missing tables
are created, present ones are checked for the columns this schema has, and no row is
touched except the two every ledger starts with, when absent.

Revision ID: 0001
Revises: (none)
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from migration_evals.core.errors import StoreError

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

_GENESIS_HASH = "0" * 64  # the hash chain's start (migration_evals.core.chain), fixed forever
_SCHEMA_VERSION = "1"  # what the previous release wrote and checks in ``meta``


def upgrade() -> None:
    bind = op.get_bind()
    inspector = sa.inspect(bind)
    present = set(inspector.get_table_names())
    frozen = _baseline()
    for table in frozen.sorted_tables:
        if table.name in present:
            _check_columns(table, {c["name"] for c in inspector.get_columns(table.name)})
        else:
            table.create(bind)
    _first_rows(frozen)


def downgrade() -> None:
    raise StoreError("the baseline cannot be undone: it would drop the ledger")


def _check_columns(table: sa.Table, found: set[str]) -> None:
    missing = sorted(set(table.columns.keys()) - found)
    if missing:
        raise StoreError(
            f"table {table.name} lacks column(s) {', '.join(missing)}: "
            "not a database migration-evals made"
        )


def _first_rows(frozen: sa.MetaData) -> None:
    bind = op.get_bind()
    meta, head = frozen.tables["meta"], frozen.tables["ledger_head"]
    version = bind.execute(
        sa.select(meta.c.value).where(meta.c.key == "schema_version")
    ).scalar_one_or_none()
    if version is None:
        bind.execute(meta.insert().values(key="schema_version", value=_SCHEMA_VERSION))
    elif version != _SCHEMA_VERSION:
        raise StoreError(
            f"the database says schema version {version}; the release before migrations "
            f"wrote {_SCHEMA_VERSION}: not a database this release can adopt"
        )
    if bind.execute(sa.select(head.c.id).where(head.c.id == 1)).first() is None:
        bind.execute(head.insert().values(id=1, seq=0, row_hash=_GENESIS_HASH))


def _baseline() -> sa.MetaData:
    """The tables as this revision made them: a copy, so later changes to
    ``migration_evals.core.schema`` never change what this migration does."""
    meta = sa.MetaData()
    sa.Table(
        "meta",
        meta,
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("value", sa.Text, nullable=False),
    )
    sa.Table(
        "runs",
        meta,
        sa.Column("run_id", sa.String(64), primary_key=True),
        sa.Column("started_at", sa.String(40), nullable=False),
        sa.Column("finished_at", sa.String(40)),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("options", sa.Text, nullable=False),
        sa.Column("summary", sa.Text),
    )
    sa.Table(
        "ledger",
        meta,
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
    sa.Table(
        "ledger_head",
        meta,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("seq", sa.BigInteger, nullable=False),
        sa.Column("row_hash", sa.String(64), nullable=False),
    )
    sa.Table(
        "trial_slots",
        meta,
        sa.Column("trial_id", sa.String(64), primary_key=True),
        sa.Column("run_id", sa.String(64), nullable=False, index=True),
        sa.Column("changeset_id", sa.String(200), nullable=False),
        sa.Column("seq", sa.BigInteger, nullable=False),
    )
    sa.Table(
        "gold",
        meta,
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
    sa.Table(
        "tracked_prs",
        meta,
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
    sa.Table(
        "retro_unlock",
        meta,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("unlocked_at", sa.String(40), nullable=False),
        sa.Column("threshold", sa.Integer, nullable=False),
        sa.Column("window_days", sa.Integer, nullable=False),
        sa.Column("prs", sa.Text, nullable=False),
    )
    sa.Table(
        "retro_trials",
        meta,
        sa.Column("run_id", sa.String(64), primary_key=True),
        sa.Column("trial_id", sa.String(64), primary_key=True),
        sa.Column("changeset_id", sa.String(200), nullable=False),
        sa.Column("marked_at", sa.String(40), nullable=False),
    )
    sa.Table(
        "bot_deliveries",
        meta,
        sa.Column("delivery_id", sa.String(100), primary_key=True),
        sa.Column("event", sa.String(60), nullable=False),
        sa.Column("received_at", sa.Float, nullable=False),
        sa.Column("jobs", sa.Integer, nullable=False),
    )
    sa.Table(
        "bot_jobs",
        meta,
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
    sa.Table(
        "bot_queue_guard",
        meta,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
    )
    sa.Table(
        "bot_leases",
        meta,
        sa.Column("name", sa.String(64), primary_key=True),
        sa.Column("holder", sa.String(120), nullable=False),
        sa.Column("expires_at", sa.Float, nullable=False),
    )
    sa.Table(
        "bot_check_runs",
        meta,
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
    sa.Table(
        "run_budgets",
        meta,
        sa.Column("run_id", sa.String(64), primary_key=True),
        sa.Column("limit_usd", sa.Float, nullable=False),
        sa.Column("spent_usd", sa.Float, nullable=False),
        sa.Column("exhausted", sa.Boolean, nullable=False),
    )
    return meta
