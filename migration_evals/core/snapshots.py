"""Gate snapshots: what the gate gathered from the ledger up to a row, signed.

A check of a large ledger spends its time re-reading old rows. A snapshot holds what the
gate gathered from rows 1..N (an opaque body in a format the gate names) and is signed
with the checkpoint key over that body, the row's sequence number and link and the ledger
key's id, so a later check can take rows 1..N from it and walk only the rows after N.

A snapshot is only a starting point when everything it names still holds: its signature
(by the configured checkpoint key), the ledger key it was gathered under, and row N's
stored link (a chain recomputed since would not reach it). The body is written only after
a walk that verified, and only by a holder of the private key; a writer without the key
can delete snapshots (the next check walks everything) but not forge one. Only the newest
is kept: each is the whole of what came before it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.exc import SQLAlchemyError

from migration_evals.core.checkpoints import CheckpointSigner, CheckpointVerifier
from migration_evals.core.database import Database
from migration_evals.core.errors import StoreError
from migration_evals.core.schema import gate_snapshots_table, ledger_table
from migration_evals.core.stamps import canonical_json, sha256_hex

__all__ = [
    "SNAPSHOT_PURPOSE",
    "GateSnapshots",
    "Snapshot",
    "load_snapshot",
    "reach_problem",
    "save_snapshot",
    "sign_snapshot",
    "signature_problem",
]

SNAPSHOT_PURPOSE = "migration-evals-gate-snapshot/1"


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The gate's gathering of ledger rows 1..``ledger_seq``, whose link is ``ledger_hash``."""

    created_at: str
    ledger_seq: int
    ledger_hash: str
    key_id: str  # the ledger key's id the rows were walked under
    form: str  # the body's format, named by the gate (a release may not read another's)
    body: bytes
    signer: str = ""
    signature: str = ""

    def digest(self) -> str:
        """What is signed: every field but the signature, the body by its SHA-256."""
        return sha256_hex(
            canonical_json(
                {
                    "created_at": self.created_at,
                    "ledger_seq": self.ledger_seq,
                    "ledger_hash": self.ledger_hash,
                    "key_id": self.key_id,
                    "form": self.form,
                    "body": hashlib.sha256(self.body).hexdigest(),
                }
            )
        )

    def describe(self) -> str:
        return f"gate snapshot at row {self.ledger_seq} (signed {self.created_at})"


def sign_snapshot(signer: CheckpointSigner, unsigned: Snapshot) -> Snapshot:
    key_id, signature = signer.sign_document(SNAPSHOT_PURPOSE, unsigned.digest())
    return replace(unsigned, signer=key_id, signature=signature)


def signature_problem(verifier: CheckpointVerifier, snapshot: Snapshot) -> str | None:
    """Why ``snapshot``'s signature does not hold under ``verifier``, or None."""
    wrong = verifier.document_problem(
        SNAPSHOT_PURPOSE, snapshot.digest(), snapshot.signer, snapshot.signature
    )
    return f"{snapshot.describe()}: {wrong}" if wrong else None


def reach_problem(conn: Connection, snapshot: Snapshot) -> str | None:
    """Why the chain no longer passes through the snapshot's row with its link, or None."""
    query = sa.select(ledger_table.c.row_hash).where(ledger_table.c.seq == snapshot.ledger_seq)
    stored = conn.execute(query).scalar_one_or_none()
    if stored is None:
        return f"{snapshot.describe()}: row {snapshot.ledger_seq} is gone (rows removed)"
    if stored != snapshot.ledger_hash:
        return (
            f"{snapshot.describe()}: row {snapshot.ledger_seq}'s link is not the signed one "
            "(the chain was recomputed)"
        )
    return None


def save_snapshot(conn: Connection, snapshot: Snapshot) -> None:
    """Store ``snapshot`` in place of any earlier one (call in a write transaction)."""
    conn.execute(gate_snapshots_table.delete())
    values = {
        "created_at": snapshot.created_at,
        "ledger_seq": snapshot.ledger_seq,
        "ledger_hash": snapshot.ledger_hash,
        "key_id": snapshot.key_id,
        "form": snapshot.form,
        "body": snapshot.body,
        "signer": snapshot.signer,
        "signature": snapshot.signature,
    }
    conn.execute(gate_snapshots_table.insert().values(**values))


def load_snapshot(conn: Connection) -> Snapshot | None:
    """The newest stored snapshot, unchecked (None when there is none)."""
    table = gate_snapshots_table
    query = sa.select(table).order_by(table.c.id.desc()).limit(1)
    row = conn.execute(query).mappings().first()
    if row is None:
        return None
    return Snapshot(
        created_at=str(row["created_at"]),
        ledger_seq=int(row["ledger_seq"]),
        ledger_hash=str(row["ledger_hash"]),
        key_id=str(row["key_id"]),
        form=str(row["form"]),
        body=bytes(row["body"]),
        signer=str(row["signer"]),
        signature=str(row["signature"]),
    )


class GateSnapshots:
    """Where the newest gate snapshot is kept beside the ledger."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def latest(self) -> Snapshot | None:
        """The newest gate snapshot, unchecked."""
        with self._db.reading() as conn:
            return load_snapshot(conn)

    def reach_problem(self, snapshot: Snapshot) -> str | None:
        """Why the ledger's chain no longer passes through ``snapshot``'s row, or None."""
        with self._db.reading() as conn:
            return reach_problem(conn, snapshot)

    def keep(self, snapshot: Snapshot) -> None:
        """Store a signed gate snapshot in place of the previous one."""
        try:
            with self._db.engine.begin() as conn:
                save_snapshot(conn, snapshot)
        except SQLAlchemyError as exc:
            raise StoreError(f"cannot store the gate snapshot: {exc}") from exc
