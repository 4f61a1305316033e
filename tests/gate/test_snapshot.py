"""The incremental gate: a check starts after the newest signed gate snapshot, decides from
the columns kept with it what a full walk decides, and refuses what a full walk would
refuse among the rows it walks; a full walk still finds an edit below the snapshot."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterator
from dataclasses import fields, replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from migration_evals.core.chain import ChainKey
from migration_evals.core.checkpoints import CheckpointSigner
from migration_evals.core.integrity import LedgerKeys
from migration_evals.core.liveness import Holder
from migration_evals.core.model import FabricatedMark, Stamps, Tier
from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from migration_evals.gate.evaluation import evaluate
from migration_evals.gate.incremental import check_inputs
from migration_evals.gate.ledger_scan import scan_ledger
from migration_evals.gate.publication import GateInputs, decide, inputs_of
from migration_evals.gate.snapshot import Body, find_start, keep
from tests.conftest import LEDGER_KEY, write_checkpoint_key
from tests.gate.ledgers import POST, PRE, Plan, add_gold, append, balanced, build_trial


def _no_probe(*_: object) -> None:
    return None


def _check(store: Store, specs: SpecSet, *, full: bool, run_id: str | None = None) -> GateInputs:
    """What ``gate check`` (or ``gate check --full``) decides from."""
    if full:
        return inputs_of(evaluate(store, specs, run_id=run_id, reliability=_no_probe))
    return check_inputs(store, specs, run_id=run_id, reliability=_no_probe)


def _same_decision(incremental: GateInputs, full: GateInputs) -> None:
    """Everything the refusals read is the same, but the chain's notes on where it started."""
    for name in (f.name for f in fields(GateInputs) if f.name != "chain"):
        assert getattr(incremental, name) == getattr(full, name), name
    assert (incremental.chain.ok, incremental.chain.rows) == (full.chain.ok, full.chain.rows)
    assert decide(incremental) == decide(full)


def _open_keyed(db: Path, signer: CheckpointSigner) -> Store:
    return Store.open(
        f"sqlite:///{db}", keys=LedgerKeys(chain=ChainKey(LEDGER_KEY.encode()), signer=signer)
    )


def _snapshot_then_append(store: Store, specs: SpecSet) -> None:
    """120 trials (480 rows), checkpointed, a check that kept a snapshot there, and then
    more trials: a re-run of an old changeset and new ones."""
    append(store, specs, balanced())
    add_gold(store)
    store.ledger.checkpoint()
    _check(store, specs, full=True)  # walks every row, keeps the snapshot
    rerun = Plan("gpt-5/2020/000", "gpt-5", "go-import-rewrite", "fail@compile", run_id="run-2")
    fresh = [Plan(f"new/{n}", "gpt-5", outcome="pass", run_id="run-2") for n in range(5)]
    append(store, specs, [rerun, *fresh])


@pytest.fixture(scope="session")
def _snapshotted_template(tmp_path_factory: pytest.TempPathFactory, specs: SpecSet) -> Path:
    """``snapshotted``'s ledger and the key that signed it, written once per worker: building
    and checking 504 signed rows took about 0.17 s for each of the tests that ask."""
    folder = tmp_path_factory.mktemp("snapshotted")
    signer = CheckpointSigner.from_pem(write_checkpoint_key(folder / "checkpoint.pem"))
    early = {key: replace(h, registered_at=date(2000, 1, 1)) for key, h in specs.hypotheses.items()}
    store = _open_keyed(folder / "ledger.db", signer)
    _snapshot_then_append(store, replace(specs, hypotheses=early))
    store.close()  # the last connection: SQLite folds the WAL into the file
    return folder


@pytest.fixture
def signer(_snapshotted_template: Path, tmp_path: Path) -> CheckpointSigner:
    """The key that signed the template's checkpoints, so a copy of it verifies."""
    key = tmp_path / "checkpoint.pem"
    shutil.copyfile(_snapshotted_template / "checkpoint.pem", key)
    return CheckpointSigner.from_pem(key)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "ledger.db"


@pytest.fixture
def keyed(db: Path, signer: CheckpointSigner) -> Iterator[Store]:
    opened = _open_keyed(db, signer)
    yield opened
    opened.close()


@pytest.fixture
def snapshotted(_snapshotted_template: Path, db: Path, signer: CheckpointSigner) -> Iterator[Store]:
    """A copy of the template's ledger (see ``_snapshot_then_append``), which each test may
    change as it likes."""
    shutil.copyfile(_snapshotted_template / "ledger.db", db)
    opened = _open_keyed(db, signer)
    yield opened
    opened.close()


def _edit_row(db: Path, seq: int, sql: str = "payload = replace(payload, 'pass', 'fail')") -> None:
    with sqlite3.connect(db) as conn:
        conn.execute(f"UPDATE ledger SET {sql} WHERE seq = ?", (seq,))  # noqa: S608 - test


def test_a_check_keeps_a_snapshot_at_the_checkpoint(snapshotted: Store) -> None:
    snapshot = snapshotted.snapshots.latest()
    assert snapshot is not None
    assert snapshot.ledger_seq == 480 == snapshotted.ledger.checkpoints()[-1].ledger_seq


def test_an_incremental_check_counts_what_a_full_walk_counts(
    snapshotted: Store, gate_specs: SpecSet
) -> None:
    incremental = _check(snapshotted, gate_specs, full=False)
    full = _check(snapshotted, gate_specs, full=True)
    assert incremental.chain.resumed_at == 480
    assert full.chain.resumed_at == 0
    assert incremental.chain.ok and full.chain.ok
    assert (incremental.chain.rows, incremental.chain.head_seq) == (full.chain.rows, 504)
    assert incremental.counted == 125  # the re-run replaced its earlier trial
    _same_decision(incremental, full)
    assert any(note.startswith("incremental: rows 1-480") for note in incremental.chain.notes)


def test_a_full_walk_finds_a_row_edited_below_the_snapshot(
    snapshotted: Store, gate_specs: SpecSet, db: Path
) -> None:
    _edit_row(db, 7)
    # The incremental check does not read row 7 again and says so; the full walk does.
    assert _check(snapshotted, gate_specs, full=False).chain.ok
    full = _check(snapshotted, gate_specs, full=True).chain
    assert not full.ok
    assert any(problem.startswith("row 7: content does not match") for problem in full.problems)


def test_rows_after_the_snapshot_are_walked_and_refused_when_edited(
    snapshotted: Store, gate_specs: SpecSet, db: Path
) -> None:
    _edit_row(db, 490)
    chain = _check(snapshotted, gate_specs, full=False).chain
    assert chain.resumed_at == 480
    assert any(problem.startswith("row 490: content does not match") for problem in chain.problems)


def test_a_first_row_after_the_snapshot_that_does_not_chain_is_refused(
    snapshotted: Store, gate_specs: SpecSet, db: Path
) -> None:
    _edit_row(db, 481, f"prev_hash = '{'0' * 64}'")
    chain = _check(snapshotted, gate_specs, full=False).chain
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
    before = snapshotted.snapshots.latest()
    assert _check(snapshotted, gate_specs, full=True).chain.ok
    assert snapshotted.snapshots.latest() == before  # the same checkpoint: nothing written again
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE gate_snapshots SET created_at = 'yesterday'")
    chain = _check(snapshotted, gate_specs, full=True).chain
    assert any("the signature does not verify" in p for p in chain.problems)


def test_a_snapshot_of_another_form_is_only_a_note(snapshotted: Store) -> None:
    snapshot = snapshotted.snapshots.latest()
    assert snapshot is not None
    body: Body = ((), [], "")
    keep(
        snapshotted.snapshots,
        snapshotted.keys,
        (snapshot.ledger_seq, snapshot.ledger_hash),
        "gate-facts/0",
        body,
    )
    start = find_start(snapshotted.snapshots, snapshotted.keys, "gate-facts/1")
    assert (start.snapshot, start.problems) == (None, ())
    assert "another release" in start.notes[0]


def test_a_snapshot_inside_a_trial_keeps_that_trial_open(
    keyed: Store, gate_specs: SpecSet, db: Path
) -> None:
    append(keyed, gate_specs, balanced(per_bucket=4))
    keyed.ledger.checkpoint(at=(46, _link(db, 46)))  # row 46: the middle of trial 12's rows
    _check(keyed, gate_specs, full=False)
    assert keyed.snapshots.latest() is not None
    incremental = _check(keyed, gate_specs, full=False)
    full = _check(keyed, gate_specs, full=True)
    assert incremental.chain.resumed_at == 46
    assert incremental.counted == full.counted == 24
    _same_decision(incremental, full)


def test_a_trial_continued_after_the_snapshot_is_read_again_from_the_first_row(
    snapshotted: Store, gate_specs: SpecSet
) -> None:
    # Only a crafted ledger does this: more rows of a trial the snapshot holds whole.
    again = build_trial(Plan("gpt-5/2020/001", "gpt-5"), gate_specs, "t-run-1-gpt-5-2020-001")
    snapshotted.ledger.append_trials([(again, {})])
    incremental = _check(snapshotted, gate_specs, full=False)
    full = _check(snapshotted, gate_specs, full=True)
    assert incremental.chain.resumed_at == 0
    assert not any(note.startswith("incremental") for note in incremental.chain.notes)
    assert full.counted == 125
    _same_decision(incremental, full)


def _link(db: Path, seq: int) -> str:
    with sqlite3.connect(db) as conn:
        return str(conn.execute("SELECT row_hash FROM ledger WHERE seq = ?", (seq,)).fetchone()[0])


def test_without_the_private_key_a_snapshot_is_used_but_none_kept(
    snapshotted: Store, gate_specs: SpecSet, db: Path, signer: CheckpointSigner
) -> None:
    keys = replace(snapshotted.keys, signer=None, verifier=signer.verifier())
    public_only = Store.open(f"sqlite:///{db}", keys=keys)
    try:
        snapshotted.ledger.checkpoint()  # a newer checkpoint a holder of the private key would use
        assert _check(public_only, gate_specs, full=False).chain.resumed_at == 480
        assert public_only.snapshots.latest().ledger_seq == 480  # type: ignore[union-attr]
    finally:
        public_only.close()


def test_without_a_checkpoint_key_every_row_is_walked(store: Store, gate_specs: SpecSet) -> None:
    append(store, gate_specs, balanced(per_bucket=2))
    inputs = _check(store, gate_specs, full=False)
    assert inputs.chain.resumed_at == 0
    assert store.snapshots.latest() is None


@pytest.mark.postgres
def test_an_incremental_check_on_postgresql(
    postgres_url: str, signer: CheckpointSigner, gate_specs: SpecSet
) -> None:
    keys = LedgerKeys(chain=ChainKey(LEDGER_KEY.encode()), signer=signer)
    server = Store.open(postgres_url, keys=keys)
    try:
        append(server, gate_specs, balanced(per_bucket=4))
        server.ledger.checkpoint()
        _check(server, gate_specs, full=False)  # walks every row, keeps the snapshot
        append(server, gate_specs, [Plan("new/0", "gpt-5", run_id="run-2")])
        incremental = _check(server, gate_specs, full=False)
        full = _check(server, gate_specs, full=True)
        assert (incremental.chain.resumed_at, incremental.chain.head_seq) == (96, 100)
        assert incremental.chain.ok
        _same_decision(incremental, full)
    finally:
        server.close()


MARK = FabricatedMark("judge", "k" * 8, "cassettes/judge/missing.json", "cassette miss")
OLD = Stamps("0" * 64, "1" * 64, "2" * 64)


def _eventful(tag: str, run_id: str) -> list[Plan]:
    """Trials that earn every refusal the columns decide: stale stamps, fabricated marks,
    infrastructure errors, strict judging (agreeing and not), a pre-cutoff advantage."""
    plans = [
        Plan(f"{tag}/stale", stamps=OLD, run_id=run_id),
        Plan(f"{tag}/marked", marks={Tier.COMPILE: (MARK,)}, run_id=run_id),
        Plan(f"{tag}/error", "gemini-2.5-pro", outcome="error@compile", run_id=run_id),
        Plan(f"{tag}/strict-0", strict=("pass", "pass"), run_id=run_id),
        Plan(f"{tag}/strict-1", "claude-sonnet-4-5", strict=("pass", "fail"), run_id=run_id),
        Plan(f"{tag}/unknown-date", created=None, run_id=run_id),
    ]
    for n in range(12):
        plans.append(Plan(f"{tag}/pre/{n}", "gpt-5", created=PRE, run_id=run_id))
        outcome = "pass" if n < 2 else "fail@tests"
        plans.append(Plan(f"{tag}/post/{n}", "gpt-5", outcome=outcome, created=POST, run_id=run_id))
    return plans


@pytest.fixture
def eventful(keyed: Store, gate_specs: SpecSet) -> Store:
    """A checkpointed, snapshotted ledger with refusals on both sides of the snapshot, an
    interrupted run, and re-runs after it that supersede trials before it (one of them a
    marked trial, whose mark then no longer counts)."""
    append(keyed, gate_specs, [*balanced(per_bucket=8), *_eventful("before", "run-1")])
    add_gold(keyed)
    keyed.ledger.checkpoint()
    _check(keyed, gate_specs, full=True)  # walks every row, keeps the snapshot
    clean = Plan("before/marked", run_id="run-3")  # supersedes the marked trial
    rerun = Plan("before/stale", outcome="fail@compile", run_id="run-3")
    append(keyed, gate_specs, [*_eventful("after", "run-3"), clean, rerun])
    keyed.runs.start_run("run-3", {}, holder=Holder(pid=1, host="grader-1", lease_s=30.0))
    later = datetime.now(UTC) + timedelta(minutes=1)
    keyed.runs.mark_interrupted(later, here="elsewhere")
    return keyed


@pytest.mark.parametrize("run_id", [None, "run-3"])
def test_an_incremental_check_decides_every_refusal_as_a_full_walk_does(
    eventful: Store, gate_specs: SpecSet, run_id: str | None
) -> None:
    late = replace(gate_specs.hypotheses["h1-claude-vs-gpt-java"], registered_at=date(2099, 1, 1))
    specs = replace(gate_specs, hypotheses={**gate_specs.hypotheses, "h1-claude-vs-gpt-java": late})
    incremental = check_inputs(eventful, specs, run_id=run_id)
    full = inputs_of(evaluate(eventful, specs, run_id=run_id))
    assert incremental.chain.resumed_at > 0 and full.chain.resumed_at == 0
    _same_decision(incremental, full)
    codes = {refusal.code.value for refusal in decide(incremental).refusals}
    assert {"stale_stamp", "fabricated", "harking", "incomplete_run"} <= codes
    assert full.reliability is not None and full.strict_trials > 0
    if run_id is None:
        assert "contamination" in codes and incremental.errors == 2
        assert [trial for trial, _ in incremental.marked] == ["t-run-3-after-marked"]


def test_an_incremental_check_keeps_the_next_snapshot_from_the_columns_it_started_with(
    snapshotted: Store, gate_specs: SpecSet
) -> None:
    snapshotted.ledger.checkpoint()  # at row 504, after the snapshot's 480
    assert _check(snapshotted, gate_specs, full=False).chain.resumed_at == 480
    assert snapshotted.snapshots.latest().ledger_seq == 504  # type: ignore[union-attr]
    append(
        snapshotted,
        gate_specs,
        [Plan("gpt-5/2020/001", "gpt-5", "java8-to-17", "fail@tests", run_id="run-4")],
    )
    incremental = _check(snapshotted, gate_specs, full=False)
    full = _check(snapshotted, gate_specs, full=True)
    assert incremental.chain.resumed_at == 504
    assert incremental.counted == full.counted == 125  # the re-run supersedes one kept before
    _same_decision(incremental, full)
