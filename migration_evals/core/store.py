"""The store: an append-only, hash-chained ledger of envelopes on SQLAlchemy 2 Core.

SQLite (WAL, ``synchronous=FULL``) by default; any SQLAlchemy URL works, PostgreSQL
included. Each ledger row carries the link of the row before it and its own link over its
content (``migration_evals.core.chain``: an HMAC under the ledger key, or a plain SHA-256 for an
unkeyed ledger), and ``ledger_head`` holds the last sequence number and link, so editing, deleting
or reordering any row is detected by ``verify_ledger``; with a key, a writer without it
cannot recompute the links. ``checkpoint`` signs both chains' ends
(``migration_evals.core.checkpoints``),
so truncation below a checkpoint is detected too. The gold labels, tracked PRs and the
unlock are chained under the same key (``record``, ``migration_evals.core.records``).

Appends are serialised: SQLite write transactions begin ``IMMEDIATE``; other backends lock
the head row (``SELECT ... FOR UPDATE``). The tables are ``migration_evals.core.schema``'s, made and
changed by the migrations in ``migration_evals.core.migrations``: ``Store.open`` upgrades a SQLite
database itself (inside a write transaction, so processes opening a new file at once do not race)
and refuses a server database that is behind until ``migration-evals db upgrade`` has run.

A trial's patch and the whole output of its sandboxed commands are kept beside the
ledger (``Store.artifacts``, ``migration_evals.core.artifacts``): a SQLite file's in a folder beside
it, another database's in its ``artifacts`` table. Envelopes name them by digest.

``trial_slots`` holds one row per trial written with ``append_trial_once``: a trial run
again elsewhere (a worker presumed dead, a repeated broker delivery) finds its slot taken
and its second set of envelopes is discarded, so the ledger keeps exactly one.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

import orjson
import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.pool import NullPool

from migration_evals.core import migrations
from migration_evals.core.artifacts import ArtifactStore, artifacts_for
from migration_evals.core.chain import CHAIN_COLUMNS, GENESIS_HASH, ChainWalk, row_hash
from migration_evals.core.checkpoints import Checkpoint, load_checkpoints, store_checkpoint
from migration_evals.core.errors import ConfigError, SchemaBehindError, StoreError
from migration_evals.core.integrity import (
    KEY_ID_META,
    LedgerCheck,
    LedgerKeys,
    implied_key_id,
    key_problem,
)
from migration_evals.core.integrity import verify_chain as _verify_chain
from migration_evals.core.liveness import Holder, RunState, StaleRun, gone_reason, pid_alive
from migration_evals.core.lookups import CacheLookups, cache_lookup_sql
from migration_evals.core.migrations import Standing
from migration_evals.core.model import Envelope, Trial
from migration_evals.core.records import RecordKind, append_record, record_head
from migration_evals.core.schema import (
    ledger_head_table,
    ledger_table,
    meta_table,
    record_log_table,
    runs_table,
    trial_slots_table,
)
from migration_evals.core.snapshots import Snapshot, load_snapshot, save_snapshot
from migration_evals.core.stamps import canonical_json

__all__ = [
    "GENESIS_HASH",
    "LedgerCheck",
    "LedgerEntry",
    "LedgerKeys",
    "SchemaPolicy",
    "Store",
    "StoredEnvelope",
    "TrialRef",
    "ledger_table",
    "row_hash",
]


class SchemaPolicy(StrEnum):
    """What ``Store.open`` does with a database whose schema is behind this release's."""

    UPGRADE = "upgrade"  # migrate it to this release's head (SQLite's default)
    REQUIRE_CURRENT = "require-current"  # refuse it (a server database's default)


# Built once: constructing SQLAlchemy statements per call costs more than running them.
_HEAD_FOR_UPDATE = (
    sa.select(ledger_head_table.c.seq, ledger_head_table.c.row_hash)
    .where(ledger_head_table.c.id == 1)
    .with_for_update()
)
_HEAD = sa.select(ledger_head_table.c.seq, ledger_head_table.c.row_hash).where(
    ledger_head_table.c.id == 1
)
_INSERT_ROWS = ledger_table.insert()
_MOVE_HEAD = (
    ledger_head_table.update()
    .where(ledger_head_table.c.id == 1)
    .values(seq=sa.bindparam("new_seq"), row_hash=sa.bindparam("new_hash"))
)


def _now() -> str:
    return _iso(datetime.now(UTC))


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def _holder_columns(holder: Holder, beat: str) -> dict[str, Any]:
    return {"heartbeat_at": beat, "lease_s": holder.lease_s, "pid": holder.pid, "host": holder.host}


@dataclass(frozen=True, slots=True)
class LedgerEntry:
    """One ledger row, decoded."""

    seq: int
    run_id: str
    trial_id: str
    changeset: Mapping[str, Any]
    envelope: Envelope
    payload: Mapping[str, Any]

    @classmethod
    def decode(cls, seq: int, payload_text: str) -> LedgerEntry:
        """One stored row (its sequence number and payload column), decoded."""
        payload = orjson.loads(payload_text)  # several times faster than json on large ledgers
        return cls(
            seq=int(seq),
            run_id=str(payload["run_id"]),
            trial_id=str(payload["envelope"]["trial_id"]),
            changeset=payload["changeset"],
            envelope=Envelope.from_dict(payload["envelope"]),
            payload=payload,
        )


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


_BUSY_TIMEOUT_MS = 30_000


def _switch_to_wal(cursor: Any) -> None:
    """Put the file in WAL mode, retrying while another connection holds it.

    SQLite skips the busy handler when the switch would deadlock with a connection that is
    switching too (several processes opening a new file at once), so those refusals are
    retried here for as long as the busy timeout would have waited.
    """
    deadline = time.monotonic() + _BUSY_TIMEOUT_MS / 1000
    pause = 0.01
    while True:
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.25)


def _sqlite_pragmas(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy emit BEGIN itself (below) instead of pysqlite's deferred BEGIN.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        # The busy handler first: every later statement, the switch to WAL included, waits
        # for another connection's lock instead of failing at once.
        cursor.execute(f"PRAGMA busy_timeout={_BUSY_TIMEOUT_MS}")
        _switch_to_wal(cursor)
        cursor.execute("PRAGMA synchronous=FULL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        # IMMEDIATE takes the write lock up front, so two appenders never deadlock;
        # readers (marked read_only) take a plain snapshot and never block writers (WAL).
        if connection.get_execution_options().get("read_only"):
            connection.exec_driver_sql("BEGIN")
        else:
            connection.exec_driver_sql("BEGIN IMMEDIATE")


def _engine_options(url: str, pool_size: int | None) -> dict[str, Any]:
    """Server databases: fail within seconds when the server is away, drop pooled
    connections that died with a server restart instead of handing them out, and keep
    as many connections as the caller has threads."""
    if not url.startswith("postgresql"):
        return {}
    options: dict[str, Any] = {"pool_pre_ping": True, "connect_args": {"connect_timeout": 10}}
    if pool_size is not None:
        options.update(pool_size=pool_size, max_overflow=pool_size)
    return options


def _make_engine(url: str, pool_size: int | None = None, *, pooled: bool = True) -> Engine:
    options = _engine_options(url, pool_size)
    if not pooled:
        options = {"connect_args": options.get("connect_args", {}), "poolclass": NullPool}
    try:
        engine = sa.create_engine(url, future=True, **options)
    except (SQLAlchemyError, ValueError, ImportError) as exc:
        raise StoreError(f"cannot use database URL {url!r}: {exc}") from exc
    if engine.dialect.name == "sqlite":
        _sqlite_pragmas(engine)
    return engine


def _on_chain(conn: Connection, at: tuple[int, str], head: tuple[int, str]) -> tuple[int, str]:
    """``at`` when the ledger holds that row with that link (or it is the genesis)."""
    seq, link = at
    stored = conn.execute(sa.select(ledger_table.c.row_hash).where(ledger_table.c.seq == seq))
    found = GENESIS_HASH if seq == 0 else stored.scalar()
    if seq > head[0] or found != link:
        raise StoreError(f"row {seq} with link {link} is not on the ledger's chain: not signed")
    return seq, link


def _still_reaches(
    conn: Connection, latest: Checkpoint, ledger: tuple[int, str], records: tuple[int, str]
) -> None:
    """Refuse to sign over chains that no longer reach ``latest`` with its links."""
    ends = {"row": (ledger_table, latest.ledger_seq, latest.ledger_hash, ledger)}
    ends["record"] = (record_log_table, latest.records_seq, latest.records_hash, records)
    for what, (table, seq, link, end) in ends.items():
        if seq == 0:
            continue
        stored = conn.execute(sa.select(table.c.row_hash).where(table.c.seq == seq)).scalar()
        if seq > end[0] or stored != link:
            raise StoreError(
                f"{latest.describe()} covers {what} {seq}, which the chain no longer reaches "
                "with the signed link: run `migration-evals ledger verify`; no checkpoint "
                "was written"
            )


class Store:
    """The ledger plus the small tables beside it. Create with ``Store.open``."""

    def __init__(self, engine: Engine, keys: LedgerKeys | None = None) -> None:
        self.engine = engine
        self.keys = keys or LedgerKeys()
        self._key_checked = False  # the ledger's key matched ours once: it cannot change
        self._append_lock = threading.Lock()
        self._lookups: CacheLookups | None = None
        self._lookups_lock = threading.Lock()
        # A trial's patch and sandbox output, beside the ledger
        # (``migration_evals.core.artifacts``).
        self.artifacts: ArtifactStore = artifacts_for(engine)

    @classmethod
    def open(
        cls,
        url: str,
        *,
        pool_size: int | None = None,
        schema: SchemaPolicy | None = None,
        keys: LedgerKeys | None = None,
    ) -> Store:
        """Connect and make sure the schema is this release's (``migration_evals.core.migrations``).

        ``schema``: by default a SQLite database is upgraded in place and any other is
        refused while it is behind, so that several servers never race on DDL (``db
        upgrade`` upgrades it). ``pool_size``: connections kept for a server database (as
        many again on demand). ``keys``: the ledger and checkpoint keys (default: none, an
        unkeyed ledger).
        """
        store = cls(_make_engine(url, pool_size), keys)
        if schema is None:
            schema = SchemaPolicy.UPGRADE if store.is_sqlite else SchemaPolicy.REQUIRE_CURRENT
        try:
            store._prepare_schema(schema)
        except BaseException:
            store.close()
            raise
        return store

    @classmethod
    def attach(cls, url: str, keys: LedgerKeys | None = None) -> Store:
        """Connect to an existing ledger without creating or checking the schema.

        For readers working beside a store opened elsewhere, e.g. the gate's scan workers.
        """
        return cls(_make_engine(url), keys)

    @property
    def display_url(self) -> str:
        return self.engine.url.render_as_string(hide_password=True)

    @property
    def is_sqlite(self) -> bool:
        return self.engine.dialect.name == "sqlite"

    def close(self) -> None:
        if self._lookups is not None:
            self._lookups.close()
            self._lookups = None
        self.engine.dispose()

    @contextmanager
    def reading(self) -> Iterator[Connection]:
        """A connection for reads only: on SQLite it never takes the write lock."""
        with self.engine.connect() as conn:
            yield conn.execution_options(read_only=True)

    def schema_state(self) -> migrations.SchemaState:
        """Where this database stands against this release's migrations."""
        try:
            with self.reading() as conn:
                return migrations.state(conn)
        except SQLAlchemyError as exc:
            raise self._unusable(exc) from exc

    def upgrade_schema(self) -> migrations.SchemaState:
        """Migrate to this release's head; returns the state the database was in before."""
        try:
            with self.engine.begin() as conn:
                before = migrations.upgrade(conn)
        except SQLAlchemyError as exc:
            raise self._unusable(exc) from exc
        if before.standing is Standing.UNKNOWN:
            raise StoreError(self._newer(before))
        return before

    def _prepare_schema(self, policy: SchemaPolicy) -> None:
        found = self.schema_state()
        if found.standing is Standing.CURRENT:
            return
        if found.standing is Standing.UNKNOWN:
            raise StoreError(self._newer(found))
        if policy is SchemaPolicy.REQUIRE_CURRENT:
            raise SchemaBehindError(
                f"database {self.display_url} {found.describe()}: upgrade it first with "
                "`migration-evals db upgrade --db URL` (once, before the servers start)"
            )
        self.upgrade_schema()

    def _unusable(self, exc: SQLAlchemyError) -> StoreError:
        reason = " ".join(str(exc.__cause__ or exc).split())  # one line, for stderr
        return StoreError(f"cannot open database {self.display_url}: {reason}")

    def _newer(self, found: migrations.SchemaState) -> str:
        return (
            f"database {self.display_url} is at schema revision {found.revision}, which this "
            f"release (at {found.head}) does not know: a newer release of migration-evals made it"
        )

    # -- runs ---------------------------------------------------------------------------

    def start_run(
        self,
        run_id: str,
        options: Mapping[str, Any],
        *,
        conn: Connection | None = None,
        holder: Holder | None = None,
    ) -> None:
        """Record a run as running; inside ``conn``'s transaction when one is given.

        ``holder``: the process that will beat the run's heartbeat
        (``migration_evals.bot.heartbeat``);
        None for a run nothing watches (its lease is the default one, from its start)."""
        started = _now()
        insert = runs_table.insert().values(
            run_id=run_id,
            started_at=started,
            status=RunState.RUNNING.value,
            options=canonical_json(options),
            **(_holder_columns(holder, started) if holder is not None else {}),
        )
        if conn is not None:
            conn.execute(insert)
            return
        with self.engine.begin() as own:
            own.execute(insert)

    def finish_run(self, run_id: str, status: str, summary: Mapping[str, Any]) -> None:
        with self.engine.begin() as conn:
            conn.execute(
                runs_table.update()
                .where(runs_table.c.run_id == run_id)
                .values(finished_at=_now(), status=status, summary=canonical_json(summary))
            )

    def runs(self) -> list[dict[str, Any]]:
        with self.reading() as conn:
            rows = conn.execute(sa.select(runs_table).order_by(runs_table.c.started_at)).mappings()
            return [dict(row) for row in rows]

    def run(self, run_id: str) -> dict[str, Any] | None:
        """One run's row, or None when there is no such run."""
        with self.reading() as conn:
            row = conn.execute(
                sa.select(runs_table).where(runs_table.c.run_id == run_id)
            ).mappings()
            found = row.first()
        return None if found is None else dict(found)

    # -- liveness (``migration_evals.core.liveness``)
    # ------------------------------------------------------

    def beat(self, run_id: str, now: datetime | None = None) -> bool:
        """Move a running run's heartbeat to ``now``; False when it is no longer running
        (finished, or marked interrupted by another process)."""
        at = _iso(now) if now is not None else _now()
        with self.engine.begin() as conn:
            moved = conn.execute(
                runs_table.update()
                .where(runs_table.c.run_id == run_id, runs_table.c.status == RunState.RUNNING)
                .values(heartbeat_at=at)
            )
        return bool(moved.rowcount)

    def mark_interrupted(
        self, now: datetime, *, here: str, alive: Callable[[int], bool] = pid_alive
    ) -> list[StaleRun]:
        """Mark every running run whose process is gone as interrupted; returns them.

        One query when nothing is running. A run is marked only if its heartbeat did not
        move since it was read, so a process beating meanwhile keeps its run."""
        c = runs_table.c
        query = sa.select(c.run_id, c.started_at, c.heartbeat_at, c.lease_s, c.pid, c.host)
        with self.reading() as conn:
            running = conn.execute(query.where(c.status == RunState.RUNNING)).all()
        marked = []
        for row in running:
            last = datetime.fromisoformat(row.heartbeat_at or row.started_at)
            holder = None if row.lease_s is None else Holder(row.pid, row.host, row.lease_s)
            reason = gone_reason(last, holder, now, here=here, alive=alive)
            if reason is not None and self._interrupt(row.run_id, row.heartbeat_at, reason):
                marked.append(StaleRun(row.run_id, reason))
        return marked

    def _interrupt(self, run_id: str, seen_beat: str | None, reason: str) -> bool:
        c = runs_table.c
        unchanged = c.heartbeat_at.is_(None) if seen_beat is None else c.heartbeat_at == seen_beat
        with self.engine.begin() as conn:
            done = conn.execute(
                runs_table.update()
                .where(c.run_id == run_id, c.status == RunState.RUNNING, unchanged)
                .values(
                    status=RunState.INTERRUPTED.value,
                    summary=canonical_json({"interrupted": reason}),
                )
            )
        return bool(done.rowcount)

    def unfinished_runs(self) -> dict[str, str]:
        """Run id -> status of every run still running or interrupted (not completed)."""
        c = runs_table.c
        states = [state.value for state in RunState]
        with self.reading() as conn:
            rows = conn.execute(sa.select(c.run_id, c.status).where(c.status.in_(states)))
            return {str(run_id): str(status) for run_id, status in rows}

    def reopen_run(self, run_id: str, holder: Holder) -> bool:
        """Take over an interrupted run to resume it: running again, held by ``holder``,
        ``resumed_at`` noted. False when it is not interrupted (finished, or another
        process took it over first)."""
        c = runs_table.c
        now = _now()
        with self.engine.begin() as conn:
            done = conn.execute(
                runs_table.update()
                .where(c.run_id == run_id, c.status == RunState.INTERRUPTED)
                .values(
                    status=RunState.RUNNING.value,
                    resumed_at=now,
                    **_holder_columns(holder, now),
                )
            )
        return bool(done.rowcount)

    # -- ledger -------------------------------------------------------------------------

    def append_trial(self, trial: Trial, cache_keys: Mapping[str, str]) -> int:
        """Append every envelope of ``trial`` in one transaction; returns the last seq.

        ``cache_keys`` maps tier name to the envelope's content-addressed cache key.
        """
        return self.append_trials([(trial, cache_keys)])

    def append_trials(self, trials: Sequence[tuple[Trial, Mapping[str, str]]]) -> int:
        """Append several trials in one transaction (group commit); returns the last seq."""
        with self._append_lock, self.engine.begin() as conn:
            head = conn.execute(_HEAD_FOR_UPDATE).one()
            self._check_key(conn, int(head.seq))
            return self._chain(conn, head, trials)

    def _check_key(self, conn: Connection, head_seq: int) -> None:
        """Refuse to extend a ledger chained under another key (or none); an empty one is
        marked with ours, so it can never be extended or verified under another."""
        if self._key_checked:
            return
        recorded = implied_key_id(conn, head_seq)
        if recorded is None:  # empty: from now on chained under our key (or none)
            conn.execute(meta_table.insert().values(key=KEY_ID_META, value=self.keys.chain.key_id))
        problem = key_problem(recorded, self.keys.chain)
        if problem is not None:
            raise StoreError(f"{problem}; nothing was written to {self.display_url}")
        self._key_checked = True

    def _chain(
        self, conn: Connection, head: Any, trials: Sequence[tuple[Trial, Mapping[str, str]]]
    ) -> int:
        """Append ``trials`` after the locked ``head``, moving it; returns the last seq."""
        seq, prev = int(head.seq), str(head.row_hash)
        rows = []
        for trial, cache_keys in trials:
            summary = trial.changeset.summary()
            for envelope in trial.envelopes:
                seq += 1
                row = self._ledger_row(seq, trial.run_id, summary, envelope, cache_keys)
                row["prev_hash"] = prev
                row["row_hash"] = prev = row_hash(prev, row, self.keys.chain)
                rows.append(row)
        if rows:
            conn.execute(_INSERT_ROWS, rows)
            conn.execute(_MOVE_HEAD, {"new_seq": seq, "new_hash": prev})
        return seq

    def append_trial_once(
        self,
        trial: Trial,
        cache_keys: Mapping[str, str],
        *,
        claim: Callable[[Connection], bool] | None = None,
    ) -> int | None:
        """Append ``trial`` unless its slot is taken; returns the last seq, or None.

        ``claim`` runs in the same transaction before anything is written (a worker
        completing the job it still holds); when it returns False nothing is written. The
        head lock serialises appenders, so checking the slot and taking it cannot race.
        """
        with self._append_lock, self.engine.begin() as conn:
            if claim is not None and not claim(conn):
                conn.rollback()
                return None
            head = conn.execute(_HEAD_FOR_UPDATE).one()
            self._check_key(conn, int(head.seq))
            taken = conn.execute(
                sa.select(trial_slots_table.c.seq).where(trial_slots_table.c.trial_id == trial.id)
            ).first()
            if taken is not None:
                conn.rollback()
                return None
            seq = self._chain(conn, head, [(trial, cache_keys)])
            conn.execute(
                trial_slots_table.insert().values(
                    trial_id=trial.id, run_id=trial.run_id, changeset_id=trial.changeset.id, seq=seq
                )
            )
            return seq

    def trials_written(self, run_id: str) -> set[str]:
        """The trial ids of ``run_id`` appended through ``append_trial_once``."""
        query = sa.select(trial_slots_table.c.trial_id).where(trial_slots_table.c.run_id == run_id)
        with self.reading() as conn:
            return {str(tid) for tid in conn.execute(query).scalars()}

    @staticmethod
    def _ledger_row(
        seq: int,
        run_id: str,
        changeset: Mapping[str, Any],
        envelope: Envelope,
        cache_keys: Mapping[str, str],
    ) -> dict[str, Any]:
        payload = {"changeset": changeset, "envelope": envelope.to_dict(), "run_id": run_id}
        return {
            "seq": seq,
            "recorded_at": _now(),
            "run_id": run_id,
            "trial_id": envelope.trial_id,
            "changeset_id": envelope.changeset_id,
            "model": str(changeset["model"]),
            "recipe": str(changeset["recipe"]),
            "tier": envelope.tier.value,
            "verdict": envelope.verdict.value,
            "fabricated": envelope.is_fabricated,
            "cache_key": cache_keys.get(envelope.tier.value, ""),
            "payload": canonical_json(payload),
        }

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
        if self._in_memory:  # another connection would open another, empty, database
            sql = cache_lookup_sql(self.engine.dialect.paramstyle, len(keys))
            with self.reading() as conn:
                return [(str(k), str(p)) for k, p in conn.exec_driver_sql(sql, tuple(keys))]
        return self._cache_lookups().rows(keys)

    def _cache_lookups(self) -> CacheLookups:
        lookups = self._lookups
        if lookups is None:
            with self._lookups_lock:  # never the append lock: lookups must not wait on writes
                if self._lookups is None:
                    url = self.engine.url.render_as_string(hide_password=False)
                    self._lookups = CacheLookups(_make_engine(url, pooled=False))
                lookups = self._lookups
        return lookups

    @property
    def _in_memory(self) -> bool:
        return self.is_sqlite and self.engine.url.database in (None, "", ":memory:")

    def entries(self, *, run_id: str | None = None, batch: int = 2000) -> Iterator[LedgerEntry]:
        """Stream ledger rows in sequence order, decoded."""
        query = sa.select(ledger_table.c.seq, ledger_table.c.payload).order_by(ledger_table.c.seq)
        if run_id is not None:
            query = query.where(ledger_table.c.run_id == run_id)
        with self.reading() as conn:
            result = conn.execution_options(yield_per=batch).execute(query)
            for seq, payload_text in result:
                yield LedgerEntry.decode(seq, payload_text)

    def head(self) -> tuple[int, str]:
        with self.reading() as conn:
            row = conn.execute(
                sa.select(ledger_head_table.c.seq, ledger_head_table.c.row_hash).where(
                    ledger_head_table.c.id == 1
                )
            ).one()
        return int(row.seq), str(row.row_hash)

    def verify_ledger(self, witness: Checkpoint | None = None) -> LedgerCheck:
        """Walk the chain and check everything beside it (``migration_evals.core.integrity``): every
        edited, missing or reordered row, forged records, checkpoints no longer reached,
        and a ``witness`` kept elsewhere that the ledger no longer agrees with."""
        walk = ChainWalk(key=self.keys.chain)
        columns = [ledger_table.c[name] for name in CHAIN_COLUMNS]
        with self.reading() as conn:
            head = conn.execute(_HEAD).one()
            result = conn.execution_options(yield_per=5000).execute(
                sa.select(*columns).order_by(ledger_table.c.seq)
            )
            for row in result:
                walk.add(row)
            found = (int(head.seq), str(head.row_hash))
            return _verify_chain(conn, self.keys, [walk], found, witness=witness)

    def verify_walks(
        self,
        walks: Sequence[ChainWalk],
        head: tuple[int, str],
        *,
        upto_seq: int | None = None,
        resumed_at: int = 0,
    ) -> LedgerCheck:
        """``verify_ledger`` for rows walked elsewhere (the gate's scan, in ranges)."""
        with self.reading() as conn:
            return _verify_chain(
                conn, self.keys, walks, head, upto_seq=upto_seq, resumed_at=resumed_at
            )

    # -- the record chain and checkpoints --------------------------------------------------

    def record(self, conn: Connection, kind: RecordKind, row_key: Mapping[str, Any]) -> None:
        """Chain the row of ``kind`` named by ``row_key`` as ``conn`` now sees it; call
        after writing it, in the same transaction."""
        if not self._key_checked:  # the head lock: a first write may mark the ledger
            self._check_key(conn, int(conn.execute(_HEAD_FOR_UPDATE).one().seq))
        append_record(conn, self.keys.chain, kind, row_key)

    def checkpoints(self) -> list[Checkpoint]:
        with self.reading() as conn:
            return load_checkpoints(conn)

    def checkpoint(self, at: tuple[int, str] | None = None) -> Checkpoint:
        """Sign and store where both chains end now (or the ledger row ``at``, a row the
        chain passed through: where a bundle was built, while others append).

        Refused when the chains no longer reach the latest checkpoint, so a ledger cut or
        recomputed since is never signed over (``verify_ledger`` checks everything else).
        """
        signer = self.keys.signer
        if signer is None:
            raise ConfigError(
                "no checkpoint key: MIGRATION_EVALS_CHECKPOINT_KEY is `off`; unset it (a key "
                "is then made on first use) or name an Ed25519 private key PEM "
                "(`openssl genpkey -algorithm ed25519 -out FILE`)"
            )
        with self._append_lock, self.engine.begin() as conn:
            head = conn.execute(_HEAD_FOR_UPDATE).one()
            ledger, records = (int(head.seq), str(head.row_hash)), record_head(conn)
            if at is not None:
                ledger = _on_chain(conn, at, ledger)
            previous = load_checkpoints(conn)
            if previous:
                _still_reaches(conn, previous[-1], ledger, records)
            signed = signer.sign(ledger, records, self.keys.chain.key_id)
            return store_checkpoint(conn, signed)

    def snapshot(self) -> Snapshot | None:
        """The newest gate snapshot, unchecked (``migration_evals.core.snapshots``)."""
        with self.reading() as conn:
            return load_snapshot(conn)

    def keep_snapshot(self, snapshot: Snapshot) -> None:
        """Store a signed gate snapshot in place of the previous one."""
        try:
            with self.engine.begin() as conn:
                save_snapshot(conn, snapshot)
        except SQLAlchemyError as exc:
            raise StoreError(f"cannot store the gate snapshot: {exc}") from exc

    # -- one trial's rows, for ``show`` and the report's trials page ----------------------

    def trial_envelopes(self, trial_id: str) -> list[StoredEnvelope]:
        """Every row of one trial, in sequence order (empty when there is no such trial)."""
        columns = (ledger_table.c.seq, ledger_table.c.payload, ledger_table.c.recorded_at)
        query = (
            sa.select(*columns, ledger_table.c.cache_key)
            .where(ledger_table.c.trial_id == trial_id)
            .order_by(ledger_table.c.seq)
        )
        with self.reading() as conn:
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
        with self.reading() as conn:
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
        with self.reading() as conn:
            for row in conn.execute(query):
                entry = LedgerEntry.decode(row[0], row[1])
                if not entry.envelope.cached:
                    return StoredEnvelope(entry, str(row[2]), str(row[3]))
        return None
