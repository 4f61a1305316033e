"""The record chain: the tables beside the ledger that the gate trusts, under the same key.

The gold labels, the tracked pull requests and the retroactive unlock are rewritten over
time (labels recomputed, merge states refreshed), so they cannot be append-only like the
ledger. Instead every write appends the row as it now stands to ``record_log``, linked
to the record before it like ledger rows are (``migration_evals.core.chain``), in the same
transaction. The verifier walks that chain and compares the last record of each row with the table:
a row written, edited or deleted by anyone but the store (who holds the key) is named.

Writers call ``append_record`` inside their own transaction, after their write.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from migration_evals.core.chain import GENESIS_HASH, ChainKey, ChainWalk
from migration_evals.core.schema import (
    gold_table,
    record_log_table,
    retro_unlock_table,
    tracked_prs_table,
)
from migration_evals.core.stamps import canonical_json

__all__ = [
    "GOLD",
    "KINDS",
    "RETRO_UNLOCK",
    "TRACKED_PR",
    "RecordKind",
    "append_record",
    "record_head",
    "record_problems",
]

# Any fixed number: the key of the advisory lock that serialises record appends on PostgreSQL.
_APPEND_LOCK_KEY = 0x6D65_7265_636F_7264


@dataclass(frozen=True, slots=True)
class RecordKind:
    """A table in the record chain and the columns that name one of its rows."""

    name: str
    table: sa.Table
    key_columns: tuple[str, ...]

    def key_of(self, row: Mapping[str, Any]) -> str:
        return canonical_json([row[name] for name in self.key_columns])

    def where(self, row: Mapping[str, Any]) -> sa.ColumnElement[bool]:
        return sa.and_(*(self.table.c[name] == row[name] for name in self.key_columns))


GOLD = RecordKind("gold", gold_table, ("repo", "pr_number"))
TRACKED_PR = RecordKind("tracked_pr", tracked_prs_table, ("repo", "number"))
RETRO_UNLOCK = RecordKind("retro_unlock", retro_unlock_table, ("id",))
KINDS = {kind.name: kind for kind in (GOLD, TRACKED_PR, RETRO_UNLOCK)}

_LAST = sa.select(record_log_table.c.seq, record_log_table.c.row_hash).order_by(
    record_log_table.c.seq.desc()
)


def _body(seq: int, recorded_at: str, kind: str, record_key: str, content: str) -> str:
    header = {"kind": kind, "recorded_at": recorded_at, "record_key": record_key, "seq": seq}
    return f"{canonical_json(header)}\n{content}"


def _content(row: Mapping[str, Any]) -> str:
    return canonical_json(dict(row))


def record_head(conn: Connection) -> tuple[int, str]:
    """The last record's sequence number and link (0 and the genesis link when none)."""
    last = conn.execute(_LAST.limit(1)).first()
    return (0, GENESIS_HASH) if last is None else (int(last.seq), str(last.row_hash))


def append_record(
    conn: Connection, key: ChainKey, kind: RecordKind, row_key: Mapping[str, Any]
) -> None:
    """Record the row of ``kind`` named by ``row_key`` as it now stands in ``conn``'s
    transaction (read back, so the record holds exactly what a reader will read)."""
    if conn.dialect.name == "postgresql":
        conn.execute(sa.select(sa.func.pg_advisory_xact_lock(_APPEND_LOCK_KEY)))
    current = dict(conn.execute(sa.select(kind.table).where(kind.where(row_key))).mappings().one())
    seq, prev = record_head(conn)
    seq += 1
    recorded_at = datetime.now(UTC).isoformat(timespec="microseconds")
    content, record_key = _content(current), kind.key_of(current)
    link = key.link(f"{prev}\n{_body(seq, recorded_at, kind.name, record_key, content)}")
    conn.execute(
        record_log_table.insert().values(
            seq=seq,
            recorded_at=recorded_at,
            kind=kind.name,
            record_key=record_key,
            content=content,
            prev_hash=prev,
            row_hash=link,
        )
    )


def _walk(conn: Connection, key: ChainKey) -> tuple[ChainWalk, dict[tuple[str, str], str]]:
    """Walk the record chain; the last content recorded for each (kind, row key)."""
    walk = ChainWalk(key=key, label="record")
    latest: dict[tuple[str, str], str] = {}
    c = record_log_table.c
    query = sa.select(
        c.seq, c.recorded_at, c.kind, c.record_key, c.content, c.prev_hash, c.row_hash
    )
    for row in conn.execute(query.order_by(c.seq)):
        body = _body(int(row.seq), row.recorded_at, row.kind, row.record_key, row.content)
        walk.check(int(row.seq), row.prev_hash, row.row_hash, key.link(f"{row.prev_hash}\n{body}"))
        latest[(row.kind, row.record_key)] = row.content
    return walk, latest


def _table_problems(
    conn: Connection, kind: RecordKind, latest: dict[tuple[str, str], str]
) -> Iterator[str]:
    seen: set[str] = set()
    for found in conn.execute(sa.select(kind.table)).mappings():
        row = dict(found)
        record_key = kind.key_of(row)
        seen.add(record_key)
        recorded = latest.get((kind.name, record_key))
        if recorded is None:
            yield f"{kind.name} row {record_key}: not in the record chain (forged)"
        elif recorded != _content(row):
            yield f"{kind.name} row {record_key}: differs from its last record (edited)"
    for recorded_kind, record_key in latest:
        if recorded_kind == kind.name and record_key not in seen:
            yield f"{kind.name} row {record_key}: recorded but missing from the table (deleted)"


def record_problems(conn: Connection, key: ChainKey) -> tuple[list[str], tuple[int, str]]:
    """Every problem of the record chain and its tables; the chain's last seq and link."""
    walk, latest = _walk(conn, key)
    problems = list(walk.problems)
    if walk.rows and (walk.first_seq != 1 or walk.first_prev != GENESIS_HASH):
        problems.append(f"record {walk.first_seq}: the record chain does not start at record 1")
    for kind in KINDS.values():
        problems.extend(_table_problems(conn, kind, latest))
    end = (walk.last_seq, walk.last_hash) if walk.rows else (0, GENESIS_HASH)
    return problems, end
