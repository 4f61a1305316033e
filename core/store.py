"""The store: an append-only, hash-chained ledger of envelopes on SQLAlchemy 2 Core.

SQLite (WAL, ``synchronous=FULL``) by default; any SQLAlchemy URL works, PostgreSQL
included. Each ledger row carries the hash of the row before it and its own hash over its
content, and ``ledger_head`` holds the last sequence number and hash, so editing, deleting
or reordering any row is detected by ``verify_ledger``.

Appends are serialised: SQLite write transactions begin ``IMMEDIATE``; other backends lock
the head row (``SELECT ... FOR UPDATE``). On PostgreSQL, schema creation holds an advisory
lock, so several processes opening a new database at once do not race on ``CREATE TABLE``.

``trial_slots`` holds one row per trial written with ``append_trial_once``: a trial run
again elsewhere (a worker presumed dead, a repeated broker delivery) finds its slot taken
and its second set of envelopes is discarded, so the ledger keeps exactly one.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson
import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.pool import NullPool

from core.chain import GENESIS_HASH, HASHED_COLUMNS, row_hash
from core.errors import StoreError
from core.lookups import CacheLookups, cache_lookup_sql
from core.model import Envelope, Trial
from core.stamps import canonical_json

__all__ = [
    "GENESIS_HASH",
    "SCHEMA_VERSION",
    "LedgerCheck",
    "LedgerEntry",
    "Store",
    "metadata",
    "row_hash",
]

SCHEMA_VERSION = 1

metadata = sa.MetaData()

meta_table = sa.Table(
    "meta",
    metadata,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("value", sa.Text, nullable=False),
)

runs_table = sa.Table(
    "runs",
    metadata,
    sa.Column("run_id", sa.String(64), primary_key=True),
    sa.Column("started_at", sa.String(40), nullable=False),
    sa.Column("finished_at", sa.String(40)),
    sa.Column("status", sa.String(20), nullable=False),
    sa.Column("options", sa.Text, nullable=False),
    sa.Column("summary", sa.Text),
)

ledger_table = sa.Table(
    "ledger",
    metadata,
    sa.Column("seq", sa.BigInteger, primary_key=True, autoincrement=False),
    sa.Column("recorded_at", sa.String(40), nullable=False),
    sa.Column("run_id", sa.String(64), nullable=False, index=True),
    sa.Column("trial_id", sa.String(64), nullable=False, index=True),
    sa.Column("changeset_id", sa.String(200), nullable=False),
    sa.Column("model", sa.String(200), nullable=False),
    sa.Column("recipe", sa.String(200), nullable=False),
    sa.Column("tier", sa.String(20), nullable=False),
    sa.Column("verdict", sa.String(20), nullable=False),
    sa.Column("fabricated", sa.Boolean, nullable=False),
    sa.Column("cache_key", sa.String(64), nullable=False, index=True),
    sa.Column("payload", sa.Text, nullable=False),
    sa.Column("prev_hash", sa.String(64), nullable=False),
    sa.Column("row_hash", sa.String(64), nullable=False),
)

ledger_head_table = sa.Table(
    "ledger_head",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("seq", sa.BigInteger, nullable=False),
    sa.Column("row_hash", sa.String(64), nullable=False),
)

# Not part of the hash chain: an index of which trials are in the ledger, written in the
# same transaction as their envelopes. A table added after schema version 1 was fixed;
# ``create_all`` adds it to older databases, so the version did not need to move.
trial_slots_table = sa.Table(
    "trial_slots",
    metadata,
    sa.Column("trial_id", sa.String(64), primary_key=True),
    sa.Column("run_id", sa.String(64), nullable=False, index=True),
    sa.Column("changeset_id", sa.String(200), nullable=False),
    sa.Column("seq", sa.BigInteger, nullable=False),
)

# Any fixed number: the key of the advisory lock that serialises schema creation.
_SCHEMA_LOCK_KEY = 0x6D65_7363_6865_6D61

# Built once: constructing SQLAlchemy statements per call costs more than running them.
_HEAD_FOR_UPDATE = (
    sa.select(ledger_head_table.c.seq, ledger_head_table.c.row_hash)
    .where(ledger_head_table.c.id == 1)
    .with_for_update()
)
_INSERT_ROWS = ledger_table.insert()
_MOVE_HEAD = (
    ledger_head_table.update()
    .where(ledger_head_table.c.id == 1)
    .values(seq=sa.bindparam("new_seq"), row_hash=sa.bindparam("new_hash"))
)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


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
class LedgerCheck:
    """The outcome of walking the hash chain."""

    rows: int
    head_hash: str
    problems: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return not self.problems


def _sqlite_pragmas(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy emit BEGIN itself (below) instead of pysqlite's deferred BEGIN.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=FULL")
        cursor.execute("PRAGMA busy_timeout=30000")
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


class Store:
    """The ledger plus the small tables beside it. Create with ``Store.open``."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._append_lock = threading.Lock()
        self._lookups: CacheLookups | None = None
        self._lookups_lock = threading.Lock()

    @classmethod
    def open(
        cls, url: str, *, extra_metadata: Sequence[sa.MetaData] = (), pool_size: int | None = None
    ) -> Store:
        """Connect, create the schema on first use and check its version.

        ``pool_size``: connections kept for a server database (as many again on demand).
        """
        store = cls(_make_engine(url, pool_size))
        store._create_schema(extra_metadata)
        return store

    @classmethod
    def attach(cls, url: str) -> Store:
        """Connect to an existing ledger without creating or checking the schema.

        For readers working beside a store opened elsewhere, e.g. the gate's scan workers.
        """
        return cls(_make_engine(url))

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

    def _create_schema(self, extra_metadata: Sequence[sa.MetaData]) -> None:
        try:
            with self.engine.begin() as conn:
                if self.engine.dialect.name == "postgresql":
                    # Held to the end of this transaction; DDL is transactional there.
                    conn.execute(sa.select(sa.func.pg_advisory_xact_lock(_SCHEMA_LOCK_KEY)))
                for meta in (metadata, *extra_metadata):
                    meta.create_all(conn)
            self._initialise_rows()
        except SQLAlchemyError as exc:
            reason = " ".join(str(exc.__cause__ or exc).split())  # one line, for stderr
            raise StoreError(f"cannot open database {self.display_url}: {reason}") from exc

    def _initialise_rows(self) -> None:
        with self.engine.begin() as conn:
            version = conn.execute(
                sa.select(meta_table.c.value).where(meta_table.c.key == "schema_version")
            ).scalar_one_or_none()
            if version is None:
                try:
                    with conn.begin_nested():
                        conn.execute(
                            meta_table.insert().values(
                                key="schema_version", value=str(SCHEMA_VERSION)
                            )
                        )
                        conn.execute(
                            ledger_head_table.insert().values(id=1, seq=0, row_hash=GENESIS_HASH)
                        )
                except IntegrityError:
                    pass  # another process initialised it first
            elif int(version) != SCHEMA_VERSION:
                raise StoreError(
                    f"database {self.display_url} has schema version {version}; "
                    f"this version of migration-evals uses {SCHEMA_VERSION}"
                )

    # -- runs ---------------------------------------------------------------------------

    def start_run(
        self, run_id: str, options: Mapping[str, Any], *, conn: Connection | None = None
    ) -> None:
        """Record a run as running; inside ``conn``'s transaction when one is given."""
        insert = runs_table.insert().values(
            run_id=run_id, started_at=_now(), status="running", options=canonical_json(options)
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

    # -- ledger -------------------------------------------------------------------------

    def append_trial(self, trial: Trial, cache_keys: Mapping[str, str]) -> int:
        """Append every envelope of ``trial`` in one transaction; returns the last seq.

        ``cache_keys`` maps tier name to the envelope's content-addressed cache key.
        """
        return self.append_trials([(trial, cache_keys)])

    def append_trials(self, trials: Sequence[tuple[Trial, Mapping[str, str]]]) -> int:
        """Append several trials in one transaction (group commit); returns the last seq."""
        with self._append_lock, self.engine.begin() as conn:
            return self._chain(conn, conn.execute(_HEAD_FOR_UPDATE).one(), trials)

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
                row["row_hash"] = prev = row_hash(prev, row)
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
                sa.select(ledger_head_table.c.seq, ledger_head_table.c.row_hash)
            ).one()
        return int(row.seq), str(row.row_hash)

    def verify_ledger(self) -> LedgerCheck:
        """Walk the hash chain; report every edited, missing or reordered row."""
        problems: list[str] = []
        prev, expected_seq, rows = GENESIS_HASH, 1, 0
        columns = [ledger_table.c[name] for name in (*HASHED_COLUMNS, "prev_hash", "row_hash")]
        with self.reading() as conn:
            result = conn.execution_options(yield_per=5000).execute(
                sa.select(*columns).order_by(ledger_table.c.seq)
            )
            for row in result.mappings():
                rows += 1
                seq = int(row["seq"])
                if seq != expected_seq:
                    problems.append(f"row {expected_seq} is missing (next row is {seq})")
                if row["prev_hash"] != prev:
                    problems.append(f"row {seq}: does not chain to the row before it")
                if row_hash(row["prev_hash"], dict(row)) != row["row_hash"]:
                    problems.append(f"row {seq}: content does not match its hash (edited)")
                prev, expected_seq = str(row["row_hash"]), seq + 1
            head_seq, head_hash = self.head()
        if head_seq != expected_seq - 1 or head_hash != prev:
            problems.append(
                f"ledger head says row {head_seq} is last, but the chain ends at row "
                f"{expected_seq - 1} (rows removed from the end?)"
            )
        return LedgerCheck(rows=rows, head_hash=prev, problems=tuple(problems))
