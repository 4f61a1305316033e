"""Gate snapshots: what the gate gathered from the ledger up to a checkpoint, signed.

A new, empty table; no existing row is touched. A database without a snapshot is walked
in full by the next ``gate check``, as before.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "gate_snapshots",
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


def downgrade() -> None:
    op.drop_table("gate_snapshots")
