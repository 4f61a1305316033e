"""Artifacts: a trial's patch and the whole output of its sandboxed commands.

A new, empty table; no existing row is touched. A SQLite file keeps its artifacts in a
folder beside it and leaves the table empty; other databases keep them here
(``migration_evals.core.artifacts``).

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "artifacts",
        sa.Column("sha256", sa.String(64), primary_key=True),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("size", sa.BigInteger, nullable=False),
        sa.Column("body", sa.LargeBinary, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("artifacts")
