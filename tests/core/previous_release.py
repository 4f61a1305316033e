"""A database as the last release before schema migrations left it: its DDL and its rows.

``tests/fixtures/schema/previous.<dialect>.sql`` is what that release's ``create_all`` ran
over its four ``MetaData`` objects; ``previous.rows.json`` holds rows it wrote (two runs,
fifteen hash-chained ledger rows, trial slots, gold labels, tracked PRs, the retro unlock,
jobs, a lease, a check run, a run budget).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import sqlalchemy as sa

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "schema"

__all__ = ["build_previous_release", "previous_rows", "read_rows"]


def previous_rows() -> dict[str, list[dict[str, Any]]]:
    rows: dict[str, list[dict[str, Any]]] = json.loads(
        (FIXTURES / "previous.rows.json").read_text()
    )
    return rows


def _statements(dialect: str, tables: set[str] | None) -> list[str]:
    text = (FIXTURES / f"previous.{dialect}.sql").read_text()
    body = "\n".join(line for line in text.splitlines() if not line.startswith("--"))
    statements = [s.strip() for s in body.split(";") if s.strip()]
    if tables is None:
        return statements
    return [s for s in statements if _table_of(s) in tables]


def _table_of(statement: str) -> str:
    words = statement.split()
    return words[2] if words[1] == "TABLE" else words[words.index("ON") + 1]


def build_previous_release(url: str, *, tables: set[str] | None = None) -> None:
    """Create the previous release's tables (only ``tables`` when given) and its rows."""
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            for statement in _statements(engine.dialect.name, tables):
                conn.exec_driver_sql(statement)
            for name, rows in previous_rows().items():
                if rows and (tables is None or name in tables):
                    table = sa.Table(name, sa.MetaData(), autoload_with=conn)
                    conn.execute(table.insert(), rows)
            if engine.dialect.name == "postgresql" and (tables is None or "bot_jobs" in tables):
                # The rows came with their ids; the release's own inserts took them from here.
                conn.exec_driver_sql(
                    "SELECT setval(pg_get_serial_sequence('bot_jobs', 'id'), max(id)) FROM bot_jobs"
                )
    finally:
        engine.dispose()


def read_rows(url: str, names: list[str]) -> dict[str, list[dict[str, Any]]]:
    """Every row of the tables ``names``, in primary-key order, as plain values.

    Columns later migrations added (absent from the previous release's rows) are left
    out, so that what is compared is what that release wrote."""
    engine = sa.create_engine(url)
    found: dict[str, list[dict[str, Any]]] = {}
    try:
        with engine.connect() as conn:
            for name in names:
                table = sa.Table(name, sa.MetaData(), autoload_with=conn)
                query = sa.select(table).order_by(*table.primary_key.columns)
                rows = [dict(row) for row in conn.execute(query).mappings()]
                found[name] = [_previous_columns(name, row) for row in rows]
    finally:
        engine.dispose()
    return found


def _previous_columns(table: str, row: dict[str, Any]) -> dict[str, Any]:
    added = _ADDED_LATER.get(table, frozenset())
    return {key: value for key, value in row.items() if key not in added}


# Columns migrations after the baseline added, per table.
_ADDED_LATER: dict[str, frozenset[str]] = {
    "runs": frozenset({"heartbeat_at", "lease_s", "pid", "host", "resumed_at"}),
}
