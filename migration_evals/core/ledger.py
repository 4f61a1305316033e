"""The ledger: an append-only, hash-chained log of envelopes, and the chain beside it.

Each ledger row carries the link of the row before it and its own link over its content
(``migration_evals.core.chain``: an HMAC under the ledger key, or a plain SHA-256 for an
unkeyed ledger), and ``ledger_head`` holds the last sequence number and link, so editing,
deleting or reordering any row is detected by ``verify_ledger``; with a key, a writer
without it cannot recompute the links. ``checkpoint`` signs both chains' ends
(``migration_evals.core.checkpoints``), so truncation below a checkpoint is detected too.
The gold labels, tracked PRs and the unlock are chained under the same key (``record``,
``migration_evals.core.records``).

Appends are serialised: SQLite write transactions begin ``IMMEDIATE``; other backends lock
the head row (``SELECT ... FOR UPDATE``).

``trial_slots`` holds one row per trial written with ``append_trial_once``: a trial run
again elsewhere (a worker presumed dead, a repeated broker delivery) finds its slot taken
and its second set of envelopes is discarded, so the ledger keeps exactly one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import orjson
import sqlalchemy as sa
from sqlalchemy.engine import Connection

from migration_evals.core.chain import CHAIN_COLUMNS, GENESIS_HASH, ChainWalk, row_hash
from migration_evals.core.checkpoints import Checkpoint, load_checkpoints, store_checkpoint
from migration_evals.core.database import Database
from migration_evals.core.errors import ConfigError, StoreError
from migration_evals.core.integrity import (
    KEY_ID_META,
    LedgerCheck,
    LedgerKeys,
    implied_key_id,
    key_problem,
)
from migration_evals.core.integrity import verify_chain as _verify_chain
from migration_evals.core.model import Envelope, Trial
from migration_evals.core.records import RecordKind, append_record, record_head
from migration_evals.core.runs import now_iso
from migration_evals.core.schema import (
    ledger_head_table,
    ledger_table,
    meta_table,
    record_log_table,
    trial_slots_table,
)
from migration_evals.core.stamps import canonical_json

__all__ = ["Ledger", "LedgerEntry"]


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
        "recorded_at": now_iso(),
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


class Ledger:
    """Appending to both chains, reading the ledger back, verifying and signing it."""

    def __init__(self, db: Database, keys: LedgerKeys) -> None:
        self._db = db
        self.keys = keys
        self._key_checked = False  # the ledger's key matched ours once: it cannot change
        self._append_lock = threading.Lock()

    # -- appending ----------------------------------------------------------------------

    def append_trial(self, trial: Trial, cache_keys: Mapping[str, str]) -> int:
        """Append every envelope of ``trial`` in one transaction; returns the last seq.

        ``cache_keys`` maps tier name to the envelope's content-addressed cache key.
        """
        return self.append_trials([(trial, cache_keys)])

    def append_trials(self, trials: Sequence[tuple[Trial, Mapping[str, str]]]) -> int:
        """Append several trials in one transaction (group commit); returns the last seq."""
        with self._append_lock, self._db.engine.begin() as conn:
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
            raise StoreError(f"{problem}; nothing was written to {self._db.display_url}")
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
                row = _ledger_row(seq, trial.run_id, summary, envelope, cache_keys)
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
        with self._append_lock, self._db.engine.begin() as conn:
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
        with self._db.reading() as conn:
            return {str(tid) for tid in conn.execute(query).scalars()}

    # -- reading and verifying ----------------------------------------------------------

    def entries(self, *, run_id: str | None = None, batch: int = 2000) -> Iterator[LedgerEntry]:
        """Stream ledger rows in sequence order, decoded."""
        query = sa.select(ledger_table.c.seq, ledger_table.c.payload).order_by(ledger_table.c.seq)
        if run_id is not None:
            query = query.where(ledger_table.c.run_id == run_id)
        with self._db.reading() as conn:
            result = conn.execution_options(yield_per=batch).execute(query)
            for seq, payload_text in result:
                yield LedgerEntry.decode(seq, payload_text)

    def head(self) -> tuple[int, str]:
        with self._db.reading() as conn:
            row = conn.execute(_HEAD).one()
        return int(row.seq), str(row.row_hash)

    def verify_ledger(self, witness: Checkpoint | None = None) -> LedgerCheck:
        """Walk the chain and check everything beside it (``migration_evals.core.integrity``): every
        edited, missing or reordered row, forged records, checkpoints no longer reached,
        and a ``witness`` kept elsewhere that the ledger no longer agrees with."""
        walk = ChainWalk(key=self.keys.chain)
        columns = [ledger_table.c[name] for name in CHAIN_COLUMNS]
        with self._db.reading() as conn:
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
        with self._db.reading() as conn:
            return _verify_chain(
                conn, self.keys, walks, head, upto_seq=upto_seq, resumed_at=resumed_at
            )

    # -- the record chain and checkpoints ------------------------------------------------

    @contextmanager
    def writing(self) -> Iterator[Connection]:
        """A write transaction for rows chained with ``record``: the rows and their
        records commit together or not at all."""
        with self._db.engine.begin() as conn:
            yield conn

    def record(self, conn: Connection, kind: RecordKind, row_key: Mapping[str, Any]) -> None:
        """Chain the row of ``kind`` named by ``row_key`` as ``conn`` now sees it; call
        after writing it, in the same transaction."""
        if not self._key_checked:  # the head lock: a first write may mark the ledger
            self._check_key(conn, int(conn.execute(_HEAD_FOR_UPDATE).one().seq))
        append_record(conn, self.keys.chain, kind, row_key)

    def checkpoints(self) -> list[Checkpoint]:
        with self._db.reading() as conn:
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
        with self._append_lock, self._db.engine.begin() as conn:
            head = conn.execute(_HEAD_FOR_UPDATE).one()
            ledger, records = (int(head.seq), str(head.row_hash)), record_head(conn)
            if at is not None:
                ledger = _on_chain(conn, at, ledger)
            previous = load_checkpoints(conn)
            if previous:
                _still_reaches(conn, previous[-1], ledger, records)
            signed = signer.sign(ledger, records, self.keys.chain.key_id)
            return store_checkpoint(conn, signed)
