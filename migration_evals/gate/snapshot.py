"""Where an incremental gate check starts: the newest signed gate snapshot that holds.

``migration_evals.gate.ledger_scan`` gathers the facts of rows 1..N once, after a walk that
verified, and
keeps them at a signed checkpoint (``migration_evals.core.snapshots``); the next check takes rows
1..N from that snapshot and walks only the rows after N. This module finds the snapshot to start
from, checks it, and keeps a new one; the scan decides what goes in the body.

A snapshot whose signature does not hold, or whose row the chain no longer reaches with the
signed link, is a problem (someone wrote or cut what only the key holder and the chain may)
and the check walks every row; one from another release or another ledger key is only a
note, and every row is walked too. The body is decoded only once its signature holds.
"""

from __future__ import annotations

import marshal
import zlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from migration_evals.core.errors import StoreError
from migration_evals.core.integrity import LedgerKeys
from migration_evals.core.snapshots import (
    GateSnapshots,
    Snapshot,
    sign_snapshot,
    signature_problem,
)

__all__ = ["Body", "Start", "encode", "find_start", "held", "keep"]

# (the finished trials as plain columns, ``migration_evals.gate.columns``; the trial left open, as a
# packed builder; the last row's trial id)
Body = tuple[Any, list[tuple[Any, ...]], str]


@dataclass(frozen=True, slots=True)
class Start:
    """The snapshot to start from (None: walk every row), and what was found on the way."""

    snapshot: Snapshot | None = None
    body: Body | None = None
    problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def seq(self) -> int:
        return self.snapshot.ledger_seq if self.snapshot is not None else 0


def encode(body: Body) -> bytes:
    # marshal: the standard library's fastest reader of bytes and plain tuples, and it
    # shares repeated strings. It is only ever handed bytes whose
    # signature has been checked, and the form names its version
    # (``migration_evals.gate.ledger_scan``).
    return zlib.compress(marshal.dumps(body), 1)


def _decode(data: bytes) -> Body:
    columns, ends, last_trial = marshal.loads(zlib.decompress(data))  # noqa: S302 - signed
    return columns, list(ends), str(last_trial)


def held(snapshots: GateSnapshots, keys: LedgerKeys, form: str) -> tuple[Snapshot | None, Start]:
    """The newest snapshot when it holds (else None), and what was found about it, without
    decoding its body (a full walk needs only to know where one is kept already)."""
    checker = keys.checker
    snapshot = snapshots.latest() if checker is not None else None
    if checker is None or snapshot is None:
        return None, Start()
    forged = signature_problem(checker, snapshot)
    if forged:
        return None, Start(problems=(forged,))
    if snapshot.key_id != keys.chain.key_id or snapshot.form != form:
        why = "another ledger key" if snapshot.form == form else "another release"
        note = f"{snapshot.describe()} was gathered by {why}: every row was walked"
        return None, Start(notes=(note,))
    cut = snapshots.reach_problem(snapshot)
    if cut:
        return None, Start(problems=(cut,))
    return snapshot, Start()


def find_start(snapshots: GateSnapshots, keys: LedgerKeys, form: str) -> Start:
    """The newest snapshot this check may start from, checked; a ``Start`` without one
    when there is none (no checkpoint key, no snapshot, one that does not hold)."""
    snapshot, found = held(snapshots, keys, form)
    if snapshot is None:
        return found
    note = (
        f"incremental: rows 1-{snapshot.ledger_seq} were taken from the {snapshot.describe()}, "
        "not walked again (`gate check --full` walks every row)"
    )
    return Start(snapshot, _decode(snapshot.body), notes=(note,))


def keep(
    snapshots: GateSnapshots, keys: LedgerKeys, at: tuple[int, str], form: str, body: Body
) -> str | None:
    """Sign and store the facts of rows 1..``at`` (a checkpoint's row); a note when the
    store refuses (the check stands; the next one walks from the older snapshot)."""
    signer = keys.signer
    if signer is None:
        return None
    unsigned = Snapshot(
        created_at=datetime.now(UTC).isoformat(timespec="microseconds"),
        ledger_seq=at[0],
        ledger_hash=at[1],
        key_id=keys.chain.key_id,
        form=form,
        body=encode(body),
    )
    try:
        snapshots.keep(sign_snapshot(signer, unsigned))
    except StoreError as exc:
        return f"the gate snapshot was not kept: {exc}"
    return None
