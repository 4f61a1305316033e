"""Reads of the ledger by trial and by cache key: the cascade's reuse of earlier answers,
and one trial's rows for ``show`` and the report's trials page.

Cache lookups run on a connection of their own (``migration_evals.core.lookups``), never
behind the ledger's append lock, so that grading threads reusing answers do not wait on
writers.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass

import sqlalchemy as sa

from migration_evals.core.database import Database, make_engine
from migration_evals.core.ledger import LedgerEntry
from migration_evals.core.lookups import CacheLookups, cache_lookup_sql
from migration_evals.core.model import Envelope
from migration_evals.core.schema import ledger_table

__all__ = ["StoredEnvelope", "TrialQueries", "TrialRef"]


@dataclass(frozen=True, slots=True)
class StoredEnvelope:
    """One ledger row as a reader of one trial wants it: the entry and its row's columns."""

    entry: LedgerEntry
    recorded_at: str
    cache_key: str


@dataclass(frozen=True, slots=True)
class TrialRef:
    """Where a trial sits in the ledger: its run, changeset and rows."""

    trial_id: str
    run_id: str
    changeset_id: str
    model: str
    recipe: str
    first_seq: int
    last_seq: int
    recorded_at: str


class TrialQueries:
    """Envelopes found by cache key, and trials found by id or changeset."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._lookups: CacheLookups | None = None
        self._lookups_lock = threading.Lock()

    @property
    def display_url(self) -> str:
        """The database the queries read, as messages name it (no password)."""
        return self._db.display_url

    def close(self) -> None:
        if self._lookups is not None:
            self._lookups.close()
            self._lookups = None

    # -- reuse by cache key -------------------------------------------------------------

    def cached_envelope(self, cache_key: str) -> Envelope | None:
        """The newest reusable envelope for ``cache_key``: never an error, never fabricated."""
        return self.cached_envelopes([cache_key]).get(cache_key)

    def cached_envelopes(self, cache_keys: Sequence[str]) -> dict[str, Envelope]:
        """``cached_envelope`` for several keys in one query (one per trial, not per tier)."""
        found: dict[str, Envelope] = {}
        for key, payload in self._cache_rows(list(cache_keys)):
            if key not in found:  # rows come newest first
                found[key] = Envelope.from_dict(json.loads(payload)["envelope"])
        return found

    def _cache_rows(self, keys: list[str]) -> list[tuple[str, str]]:
        if not keys:
            return []
        if self._db.in_memory:  # another connection would open another, empty, database
            sql = cache_lookup_sql(self._db.engine.dialect.paramstyle, len(keys))
            with self._db.reading() as conn:
                return [(str(k), str(p)) for k, p in conn.exec_driver_sql(sql, tuple(keys))]
        return self._cache_lookups().rows(keys)

    def _cache_lookups(self) -> CacheLookups:
        lookups = self._lookups
        if lookups is None:
            with self._lookups_lock:  # never the append lock: lookups must not wait on writes
                if self._lookups is None:
                    url = self._db.engine.url.render_as_string(hide_password=False)
                    self._lookups = CacheLookups(make_engine(url, pooled=False))
                lookups = self._lookups
        return lookups

    # -- one trial's rows ---------------------------------------------------------------

    def trial_envelopes(self, trial_id: str) -> list[StoredEnvelope]:
        """Every row of one trial, in sequence order (empty when there is no such trial)."""
        columns = (ledger_table.c.seq, ledger_table.c.payload, ledger_table.c.recorded_at)
        query = (
            sa.select(*columns, ledger_table.c.cache_key)
            .where(ledger_table.c.trial_id == trial_id)
            .order_by(ledger_table.c.seq)
        )
        with self._db.reading() as conn:
            rows = conn.execute(query).all()
        return [StoredEnvelope(LedgerEntry.decode(r[0], r[1]), str(r[2]), str(r[3])) for r in rows]

    def find_trials(
        self, *, trial_id: str | None = None, changeset_id: str | None = None, prefix: bool = False
    ) -> list[TrialRef]:
        """The trials with this id (or id prefix), or of this changeset; oldest first."""
        c = ledger_table.c
        query = sa.select(
            c.trial_id,
            sa.func.min(c.run_id),
            sa.func.min(c.changeset_id),
            sa.func.min(c.model),
            sa.func.min(c.recipe),
            sa.func.min(c.seq),
            sa.func.max(c.seq),
            sa.func.min(c.recorded_at),
        ).group_by(c.trial_id)
        if trial_id is not None:
            escaped = trial_id.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            query = query.where(
                c.trial_id.like(escaped + "%", escape="\\") if prefix else c.trial_id == trial_id
            )
        if changeset_id is not None:
            query = query.where(c.changeset_id == changeset_id)
        with self._db.reading() as conn:
            rows = conn.execute(query.order_by(sa.func.min(c.seq))).all()
        return [
            TrialRef(
                str(r[0]),
                str(r[1]),
                str(r[2]),
                str(r[3]),
                str(r[4]),
                int(r[5]),
                int(r[6]),
                str(r[7]),
            )
            for r in rows
        ]

    def first_with_key(self, cache_key: str, before_seq: int) -> StoredEnvelope | None:
        """The newest envelope before ``before_seq`` with ``cache_key`` that was not itself
        reused: where a cached envelope's answer was first produced."""
        c = ledger_table.c
        query = (
            sa.select(c.seq, c.payload, c.recorded_at, c.cache_key)
            .where(c.cache_key == cache_key, c.seq < before_seq)
            .order_by(c.seq.desc())
        )
        with self._db.reading() as conn:
            for row in conn.execute(query):
                entry = LedgerEntry.decode(row[0], row[1])
                if not entry.envelope.cached:
                    return StoredEnvelope(entry, str(row[2]), str(row[3]))
        return None
