"""The record chain and signed checkpoints: ``record_log`` and ``ledger_checkpoints``.

No existing row is touched, so a ledger chained before stays valid, as an unkeyed one.
The gold labels, tracked PRs and unlock already present are recorded as they stand, with
unkeyed links like the ledger they came with (this migration has no key), so the record
chain covers them from here on.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from migration_evals.core.chain import UNKEYED
from migration_evals.core.records import KINDS, append_record

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "record_log",
        sa.Column("seq", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("recorded_at", sa.String(40), nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("record_key", sa.String(400), nullable=False),
        sa.Column("content", sa.Text, nullable=False),
        sa.Column("prev_hash", sa.String(64), nullable=False),
        sa.Column("row_hash", sa.String(64), nullable=False),
    )
    op.create_table(
        "ledger_checkpoints",
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
    _record_present_rows()


def _record_present_rows() -> None:
    bind = op.get_bind()
    for kind in KINDS.values():
        keys = [kind.table.c[name] for name in kind.key_columns]
        for row in bind.execute(sa.select(*keys).order_by(*keys)).mappings():
            append_record(bind, UNKEYED, kind, dict(row))


def downgrade() -> None:
    op.drop_table("ledger_checkpoints")
    op.drop_table("record_log")
