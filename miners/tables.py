"""The miners' tables, on their own ``MetaData``: ``Store.open(url, extra_metadata=[metadata])``.

``tracked_prs``   every agent PR the bot graded, with its latest merge state
``retro_unlock``  one row, written once: when retroactive scoring unlocked and which PRs earned it
``retro_trials``  trials graded retroactively (historical changesets graded after the unlock)

Times are ISO 8601 strings in UTC, as in the ledger, so every backend sorts them alike.
The gold labels themselves live in ``core.gold`` because the gate reads them too.
"""

from __future__ import annotations

import sqlalchemy as sa

__all__ = ["metadata", "retro_trials_table", "retro_unlock_table", "tracked_prs_table"]

metadata = sa.MetaData()

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

retro_trials_table = sa.Table(
    "retro_trials",
    metadata,
    sa.Column("run_id", sa.String(64), primary_key=True),
    sa.Column("trial_id", sa.String(64), primary_key=True),
    sa.Column("changeset_id", sa.String(200), nullable=False),
    sa.Column("marked_at", sa.String(40), nullable=False),
)
