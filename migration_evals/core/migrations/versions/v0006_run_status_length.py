"""Run statuses up to 64 characters: ``runs.status`` held 20, fewer than three of the
statuses a run ends with (``stopped: budget exhausted``, ``completed with internal
errors``, ``deferred: an outside API was unavailable``), so PostgreSQL refused to finish
such a run (SQLite does not enforce the length). Existing rows are kept as they are.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.alter_column(
            "status", type_=sa.String(64), existing_type=sa.String(20), existing_nullable=False
        )


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.alter_column(
            "status", type_=sa.String(20), existing_type=sa.String(64), existing_nullable=False
        )
