"""Run heartbeats: who holds a running run and until when, so a dead one can be found.

``heartbeat_at`` is moved forward by the running process every few seconds; a run whose
heartbeat is older than its ``lease_s`` (or, on the same ``host``, whose ``pid`` is gone)
is marked ``interrupted`` by the next command. ``resumed_at`` notes the last
``run --resume``. Rows of earlier runs keep NULLs: their start time stands in for the
heartbeat. The status index keeps that check to one cheap query.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("heartbeat_at", sa.String(40)))
        batch.add_column(sa.Column("lease_s", sa.Float))
        batch.add_column(sa.Column("pid", sa.Integer))
        batch.add_column(sa.Column("host", sa.String(255)))
        batch.add_column(sa.Column("resumed_at", sa.String(40)))
    op.create_index("ix_runs_status", "runs", ["status"])


def downgrade() -> None:
    op.drop_index("ix_runs_status", table_name="runs")
    with op.batch_alter_table("runs") as batch:
        for name in ("resumed_at", "host", "pid", "lease_s", "heartbeat_at"):
            batch.drop_column(name)
