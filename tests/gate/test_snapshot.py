"""The incremental gate: a check starts after the newest signed gate snapshot, counts what a
full walk counts, and refuses what a full walk would refuse among the rows it walks; a full
walk still finds an edit below the snapshot."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from core.chain import ChainKey
from core.checkpoints import CheckpointSigner
from core.integrity import LedgerKeys
from core.specs import SpecSet
from core.store import Store
from gate.evaluation import Evaluation, evaluate
from gate.ledger_scan import scan_ledger
from gate.snapshot import find_start, keep
from tests.conftest import LEDGER_KEY, write_checkpoint_key
from tests.gate.ledgers import Plan, add_gold, append, balanced, build_trial


def _no_probe(*_: object) -> None:
    return None


def _evaluate(store: Store, specs: SpecSet, *, full: bool) -> Evaluation:
    return evaluate(store, specs, reliability=_no_probe, full=full)


@pytest.fixture
def signer(tmp_path: Path) -> CheckpointSigner:
    return CheckpointSigner.from_pem(write_checkpoint_key(tmp_path / "checkpoint.pem"))


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "ledger.db"


@pytest.fixture
def keyed(db: Path, signer: CheckpointSigner) -> Iterator[Store]:
    keys = LedgerKeys(chain=ChainKey(LEDGER_KEY.encode()), signer=signer)
    opened = Store.open(f"sqlite:///{db}", keys=keys)
    yield opened
    opened.close()


@pytest.fixture
def snapshotted(keyed: Store, gate_specs: SpecSet) -> Store:
    """120 trials (480 rows), checkpointed, a check that kept a snapshot there, and then
    more trials: a re-run of an old changeset and new ones."""
    append(keyed, gate_specs, balanced())
    add_gold(keyed)
    keyed.checkpoint()
    _evaluate(keyed, gate_specs, full=False)
    rerun = Plan("gpt-5/2020/000", "gpt-5", "go-import-rewrite", "fail@compile", run_id="run-2")
    fresh = [Plan(f"new/{n}", "gpt-5", outcome="pass", run_id="run-2") for n in range(5)]
    append(keyed, gate_specs, [rerun, *fresh])
    return keyed


def _edit_row(db: Path, seq: int, sql: str = "payload = replace(payload, 'pass', 'fail')") -> None:
    with sqlite3.connect(db) as conn:
        conn.execute(f"UPDATE ledger SET {sql} WHERE seq = ?", (seq,))  # noqa: S608 - test


def test_a_check_keeps_a_snapshot_at_the_checkpoint(snapshotted: Store) -> None:
    snapshot = snapshotted.snapshot()
    assert snapshot is not None
    assert snapshot.ledger_seq == 480 == snapshotted.checkpoints()[-1].ledger_seq


def test_an_incremental_check_counts_what_a_full_walk_counts(
    snapshotted: Store, gate_specs: SpecSet
) -> None:
    incremental = _evaluate(snapshotted, gate_specs, full=False)
    full = _evaluate(snapshotted, gate_specs, full=True)
    assert incremental.chain.resumed_at == 480
    assert full.chain.resumed_at == 0
    assert incremental.chain.ok and full.chain.ok
    assert (incremental.chain.rows, incremental.chain.head_seq) == (full.chain.rows, 504)
    assert incremental.selection == full.selection
    assert incremental.selection.superseded == 1  # the re-run replaced its earlier trial
    assert incremental.numbers.to_dict() == full.numbers.to_dict()
    assert any(note.startswith("incremental: rows 1-480") for note in incremental.chain.notes)


def test_a_full_walk_finds_a_row_edited_below_the_snapshot(
    snapshotted: Store, gate_specs: SpecSet, db: Path
) -> None:
    _edit_row(db, 7)
    # The incremental check does not read row 7 again and says so; the full walk does.
    assert _evaluate(snapshotted, gate_specs, full=False).chain.ok
    full = _evaluate(snapshotted, gate_specs, full=True).chain
    assert not full.ok
    assert any(problem.startswith("row 7: content does not match") for problem in full.problems)


def test_rows_after_the_snapshot_are_walked_and_refused_when_edited(
    snapshotted: Store, gate_specs: SpecSet, db: Path
) -> None:
    _edit_row(db, 490)
    chain = _evaluate(snapshotted, gate_specs, full=False).chain
    assert chain.resumed_at == 480
    assert any(problem.startswith("row 490: content does not match") for problem in chain.problems)


def test_a_first_row_after_the_snapshot_that_does_not_chain_is_refused(
    snapshotted: Store, gate_specs: SpecSet, db: Path
) -> None:
    _edit_row(db, 481, f"prev_hash = '{'0' * 64}'")
    chain = _evaluate(snapshotted, gate_specs, full=False).chain
    assert "row 481: does not chain to the row before it" in chain.problems


def test_a_snapshot_whose_row_was_recomputed_is_refused_and_every_row_walked(
    snapshotted: Store, gate_specs: SpecSet, db: Path
) -> None:
    _edit_row(db, 480, f"row_hash = '{'f' * 64}'")
    scan = scan_ledger(snapshotted, full=False)
    assert scan.chain.resumed_at == 0
    assert any("row 480's link is not the signed one" in p for p in scan.chain.problems)
    assert len(scan.trials) == 126


def test_a_forged_snapshot_is_refused_and_every_row_walked(
    snapshotted: Store, gate_specs: SpecSet, db: Path
) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE gate_snapshots SET body = ?", (b"forged",))
    scan = scan_ledger(snapshotted, full=False)
    assert scan.chain.resumed_at == 0
    assert any("the signature does not verify" in p for p in scan.chain.problems)
    assert len(scan.trials) == 126


def test_a_full_walk_keeps_a_snapshot_that_holds_and_reports_a_forged_one(
    snapshotted: Store, gate_specs: SpecSet, db: Path
) -> None:
    before = snapshotted.snapshot()
    assert _evaluate(snapshotted, gate_specs, full=True).chain.ok
    assert snapshotted.snapshot() == before  # the same checkpoint: nothing written again
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE gate_snapshots SET created_at = 'yesterday'")
    chain = _evaluate(snapshotted, gate_specs, full=True).chain
    assert any("the signature does not verify" in p for p in chain.problems)


def test_a_snapshot_of_another_form_is_only_a_note(snapshotted: Store) -> None:
    snapshot = snapshotted.snapshot()
    assert snapshot is not None
    body = ([], [], "")
    keep(snapshotted, (snapshot.ledger_seq, snapshot.ledger_hash), "gate-facts/0", body)
    start = find_start(snapshotted, "gate-facts/1")
    assert (start.snapshot, start.problems) == (None, ())
    assert "another release" in start.notes[0]


def test_a_snapshot_inside_a_trial_keeps_that_trial_open(
    keyed: Store, gate_specs: SpecSet, db: Path
) -> None:
    append(keyed, gate_specs, balanced(per_bucket=4))
    keyed.checkpoint(at=(46, _link(db, 46)))  # row 46: the middle of trial 12's rows
    _evaluate(keyed, gate_specs, full=False)
    assert keyed.snapshot() is not None
    incremental = _evaluate(keyed, gate_specs, full=False)
    full = _evaluate(keyed, gate_specs, full=True)
    assert incremental.chain.resumed_at == 46
    assert incremental.selection == full.selection
    assert incremental.numbers.to_dict() == full.numbers.to_dict()


def test_a_trial_continued_after_the_snapshot_is_read_again_from_the_first_row(
    snapshotted: Store, gate_specs: SpecSet
) -> None:
    # Only a crafted ledger does this: more rows of a trial the snapshot holds whole.
    again = build_trial(Plan("gpt-5/2020/001", "gpt-5"), gate_specs, "t-run-1-gpt-5-2020-001")
    snapshotted.append_trials([(again, {})])
    incremental = _evaluate(snapshotted, gate_specs, full=False)
    full = _evaluate(snapshotted, gate_specs, full=True)
    assert incremental.chain.resumed_at == 0
    assert not any(note.startswith("incremental") for note in incremental.chain.notes)
    assert len(full.selection.in_scope) == 126 and incremental.selection == full.selection


def _link(db: Path, seq: int) -> str:
    with sqlite3.connect(db) as conn:
        return str(conn.execute("SELECT row_hash FROM ledger WHERE seq = ?", (seq,)).fetchone()[0])


def test_without_the_private_key_a_snapshot_is_used_but_none_kept(
    snapshotted: Store, gate_specs: SpecSet, db: Path, signer: CheckpointSigner
) -> None:
    keys = replace(snapshotted.keys, signer=None, verifier=signer.verifier())
    public_only = Store.open(f"sqlite:///{db}", keys=keys)
    try:
        snapshotted.checkpoint()  # a newer checkpoint a holder of the private key would use
        assert _evaluate(public_only, gate_specs, full=False).chain.resumed_at == 480
        assert public_only.snapshot().ledger_seq == 480  # type: ignore[union-attr]
    finally:
        public_only.close()


def test_without_a_checkpoint_key_every_row_is_walked(store: Store, gate_specs: SpecSet) -> None:
    append(store, gate_specs, balanced(per_bucket=2))
    evaluation = _evaluate(store, gate_specs, full=False)
    assert evaluation.chain.resumed_at == 0
    assert store.snapshot() is None


@pytest.mark.postgres
def test_an_incremental_check_on_postgresql(
    postgres_url: str, signer: CheckpointSigner, gate_specs: SpecSet
) -> None:
    keys = LedgerKeys(chain=ChainKey(LEDGER_KEY.encode()), signer=signer)
    server = Store.open(postgres_url, keys=keys)
    try:
        append(server, gate_specs, balanced(per_bucket=4))
        server.checkpoint()
        _evaluate(server, gate_specs, full=False)  # walks every row, keeps the snapshot
        append(server, gate_specs, [Plan("new/0", "gpt-5", run_id="run-2")])
        incremental = _evaluate(server, gate_specs, full=False)
        full = _evaluate(server, gate_specs, full=True)
        assert (incremental.chain.resumed_at, incremental.chain.head_seq) == (96, 100)
        assert incremental.chain.ok and incremental.selection == full.selection
        assert incremental.numbers.to_dict() == full.numbers.to_dict()
    finally:
        server.close()
