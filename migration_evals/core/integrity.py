"""The one verifier of the ledger: ``ledger verify``, ``gate check`` and ``verify BUNDLE``
all end in ``verify_chain``.

The rows themselves are walked by ``migration_evals.core.chain.ChainWalk`` (by the store in one
range, or by the gate's scan workers in several); ``verify_chain`` joins those walks and checks what
lies beside them: the head row, which key the ledger was chained under, the record chain
of the gold labels, tracked PRs and unlock (``migration_evals.core.records``), and every signed
checkpoint (``migration_evals.core.checkpoints``): its signature, and whether both chains still
reach it with the same links. A witness (a checkpoint kept outside the database) is checked the same
way, and must still be among the stored checkpoints: deleting rows together with the
checkpoints over them leaves a ledger that agrees with itself, but not with its witness.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from migration_evals.core.chain import UNKEYED, ChainKey, ChainWalk, end_problems, join_walks
from migration_evals.core.checkpoints import (
    Checkpoint,
    CheckpointSigner,
    CheckpointVerifier,
    load_checkpoints,
)
from migration_evals.core.records import record_head, record_problems
from migration_evals.core.schema import (
    ledger_head_table,
    ledger_table,
    meta_table,
    record_log_table,
)

__all__ = [
    "KEY_ID_META",
    "LedgerCheck",
    "LedgerKeys",
    "key_problem",
    "recorded_key_id",
    "verify_chain",
]

KEY_ID_META = "ledger_key_id"  # the ``meta`` row naming the key the ledger is chained under
_KEY_SETTING = "MIGRATION_EVALS_LEDGER_KEY"
_HEAD = sa.select(ledger_head_table.c.seq, ledger_head_table.c.row_hash).where(
    ledger_head_table.c.id == 1
)


@dataclass(frozen=True, slots=True)
class LedgerKeys:
    """The ledger key and the checkpoint keys a store works with (all optional)."""

    chain: ChainKey = UNKEYED
    signer: CheckpointSigner | None = None
    verifier: CheckpointVerifier | None = None  # None: the signer's public half, if any

    @property
    def checker(self) -> CheckpointVerifier | None:
        if self.verifier is not None:
            return self.verifier
        return self.signer.verifier() if self.signer is not None else None


@dataclass(frozen=True, slots=True)
class LedgerCheck:
    """The verdict on the ledger up to ``head_seq``: problems refuse, notes only warn."""

    rows: int
    head_seq: int
    head_hash: str
    problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    key_id: str = "unkeyed"
    checkpoint: Checkpoint | None = None  # the latest one that holds
    witness: Checkpoint | None = None  # the checkpoint kept elsewhere it was checked against
    # Rows 1..resumed_at were taken from a signed gate snapshot, not walked (0: all walked).
    resumed_at: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def keyed(self) -> bool:
        return self.key_id != "unkeyed"


def recorded_key_id(conn: Connection) -> str | None:
    """The key id the ledger says it is chained under; None for a ledger that says nothing
    (empty, or made before keys: then unkeyed once it has rows)."""
    query = sa.select(meta_table.c.value).where(meta_table.c.key == KEY_ID_META)
    return conn.execute(query).scalar_one_or_none()


def key_problem(recorded: str | None, key: ChainKey) -> str | None:
    """Why a ledger chained under ``recorded`` cannot be checked (or extended) with ``key``."""
    if recorded is None or recorded == key.key_id:
        return None
    if recorded == "unkeyed":
        return (
            f"the ledger is chained without a key, but {_KEY_SETTING} is set: a keyed "
            "verifier refuses an unkeyed chain, which anyone with write access could have "
            "rebuilt (unset the key to treat this ledger as unkeyed)"
        )
    if not key.keyed:
        return (
            f"the ledger is chained under key {recorded}, but {_KEY_SETTING} is not set: "
            "set it to the ledger's key"
        )
    return (
        f"the ledger is chained under key {recorded}, but {_KEY_SETTING} is key "
        f"{key.key_id}: the key is wrong"
    )


def implied_key_id(conn: Connection, ledger_rows: int) -> str | None:
    """The key id the ledger is chained under: what it says, else "unkeyed" when it holds
    rows or records (made before keys, or adopted by the migration), else None (empty)."""
    recorded = recorded_key_id(conn)
    if recorded is None and (ledger_rows or record_head(conn)[0]):
        return "unkeyed"
    return recorded


def _key_check(conn: Connection, key: ChainKey, rows: int, row_problems: list[str]) -> list[str]:
    recorded = implied_key_id(conn, rows)
    problem = key_problem(recorded, key)
    if problem is None:
        return row_problems
    # Under the wrong key every row fails: name the cause once instead of each row.
    failed = sum("does not match its" in p for p in row_problems)
    rest = [p for p in row_problems if "does not match its" not in p]
    return [
        problem,
        *([f"{failed} row(s) do not verify under the configured key"] if failed else []),
        *rest,
    ]


def _stored_links(conn: Connection, table: sa.Table, seqs: set[int]) -> dict[int, str]:
    if not seqs:
        return {}
    query = sa.select(table.c.seq, table.c.row_hash).where(table.c.seq.in_(sorted(seqs)))
    return {int(seq): str(link) for seq, link in conn.execute(query)}


def _reach_problems(
    checkpoint: Checkpoint, what: str, signed: tuple[int, str], end: int, stored: dict[int, str]
) -> list[str]:
    seq, link = signed
    if seq == 0:
        return []
    if seq > end:
        return [
            f"{checkpoint.describe()} covers {what} {seq}, but the chain ends at {what} {end}: "
            "rows were removed from the end"
        ]
    if stored.get(seq) != link:
        return [
            f"{checkpoint.describe()}: {what} {seq}'s link is not the signed one "
            "(the chain was recomputed)"
        ]
    return []


def _checkpoint_problems(
    conn: Connection,
    keys: LedgerKeys,
    ledger_end: int,
    records_end: int,
    upto_seq: int | None,
) -> tuple[list[str], Checkpoint | None, list[Checkpoint]]:
    checker, problems, holding = keys.checker, [], []
    found = load_checkpoints(conn)
    for checkpoint in found:
        wrong = checker.problem(checkpoint) if checker is not None else None
        if wrong:
            problems.append(wrong)
        elif checkpoint.key_id != keys.chain.key_id:
            problems.append(
                f"{checkpoint.describe()}: signed for a ledger chained under key "
                f"{checkpoint.key_id}, not {keys.chain.key_id}"
            )
        elif upto_seq is None or checkpoint.ledger_seq <= upto_seq:
            holding.append(checkpoint)
    ledger_links = _stored_links(conn, ledger_table, {c.ledger_seq for c in holding})
    record_links = _stored_links(conn, record_log_table, {c.records_seq for c in holding})
    latest = None
    for cp in holding:
        reach = _reach_problems(
            cp, "row", (cp.ledger_seq, cp.ledger_hash), ledger_end, ledger_links
        )
        if upto_seq is None:
            reach += _reach_problems(
                cp, "record", (cp.records_seq, cp.records_hash), records_end, record_links
            )
        problems.extend(reach)
        latest = cp if not reach else latest
    return problems, latest, found


def _witness_problems(
    conn: Connection,
    keys: LedgerKeys,
    witness: Checkpoint,
    ends: tuple[int, int],
    stored: Sequence[Checkpoint],
) -> list[str]:
    """Why the ledger does not agree with ``witness``, a checkpoint kept elsewhere."""
    said = f"the witness (row {witness.ledger_seq}, signed {witness.created_at})"
    if keys.checker is None:
        return [f"{said} cannot be checked: no checkpoint key or public key is configured"]
    wrong = keys.checker.problem(witness)
    if wrong:
        return [wrong.replace(witness.describe(), said, 1)]
    if witness.key_id != keys.chain.key_id:
        return [
            f"{said} is of a ledger chained under key {witness.key_id}, not {keys.chain.key_id}"
        ]
    ledger = _stored_links(conn, ledger_table, {witness.ledger_seq})
    records = _stored_links(conn, record_log_table, {witness.records_seq})
    problems = [
        p.replace(witness.describe(), said, 1)
        for p in [
            *_reach_problems(
                witness, "row", (witness.ledger_seq, witness.ledger_hash), ends[0], ledger
            ),
            *_reach_problems(
                witness, "record", (witness.records_seq, witness.records_hash), ends[1], records
            ),
        ]
    ]
    if all(c.signature != witness.signature for c in stored):
        problems.append(
            f"{said} is not among the ledger's {len(stored)} stored checkpoint(s): checkpoints "
            "were deleted (or the witness is of another ledger)"
        )
    return problems


def _notes(keys: LedgerKeys, checkpoints: Sequence[Checkpoint]) -> list[str]:
    notes = []
    if not keys.chain.keyed:
        notes.append(
            f"unkeyed: {_KEY_SETTING} is not set, so the chain is plain SHA-256 and anyone "
            "with write access can recompute it"
        )
    if keys.checker is None:
        notes.append(
            "checkpoint signatures not checked: no checkpoint key (MIGRATION_EVALS_CHECKPOINT_KEY "
            "is `off` and MIGRATION_EVALS_CHECKPOINT_PUBLIC_KEY unset)"
        )
    elif not checkpoints:
        notes.append("no signed checkpoint yet: rows removed from the end would go unnoticed")
    return notes


def verify_chain(
    conn: Connection,
    keys: LedgerKeys,
    walks: Sequence[ChainWalk],
    head: tuple[int, str],
    *,
    upto_seq: int | None = None,
    resumed_at: int = 0,
    witness: Checkpoint | None = None,
) -> LedgerCheck:
    """Join ``walks`` (the rows up to ``head``, or up to ``upto_seq``, in order) and check
    everything beside them; ``head`` is the head row as read before the walk. With
    ``resumed_at``, the first walk stands for rows 1..resumed_at as a signed gate snapshot
    gathered them (``migration_evals.core.snapshots``), checked by the caller. ``witness``: a
    checkpoint kept outside the database, which the ledger must still reach and hold."""
    problems, last_seq, last_hash = join_walks(walks)
    rows = sum(walk.rows for walk in walks)
    if upto_seq is None:
        highest = conn.execute(sa.select(sa.func.max(ledger_table.c.seq))).scalar() or 0
        current = conn.execute(_HEAD).one()
        problems.extend(end_problems(head, (last_seq, last_hash), highest, int(current.seq)))
    elif last_seq != upto_seq:
        problems.append(f"row {upto_seq} is missing (the chain ends at row {last_seq})")
    found, records_end = record_problems(conn, keys.chain)
    problems = _key_check(conn, keys.chain, rows, [*problems, *found])
    reach, latest, checkpoints = _checkpoint_problems(
        conn, keys, last_seq, records_end[0], upto_seq
    )
    problems.extend(reach)
    if witness is not None:
        ends = (last_seq, records_end[0])
        problems.extend(_witness_problems(conn, keys, witness, ends, checkpoints))
    return LedgerCheck(
        rows=rows,
        head_seq=last_seq,
        head_hash=last_hash,
        problems=tuple(problems),
        notes=tuple(_notes(keys, checkpoints)),
        key_id=keys.chain.key_id,
        checkpoint=latest,
        witness=witness,
        resumed_at=resumed_at,
    )
