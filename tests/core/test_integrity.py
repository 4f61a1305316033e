"""The one verifier beside the chain: the key a ledger is chained under, the record chain
of the gold labels, tracked PRs and unlock, and signed checkpoints."""

from __future__ import annotations

import pickle
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from migration_evals.core.chain import UNKEYED, ChainKey
from migration_evals.core.checkpoints import CheckpointSigner, CheckpointVerifier
from migration_evals.core.errors import ConfigError, StoreError
from migration_evals.core.gold import GoldLabel, GoldRow, upsert_gold
from migration_evals.core.integrity import LedgerKeys
from migration_evals.core.store import Store
from migration_evals.miners.policy import SurvivalPolicy
from migration_evals.miners.retro import current_unlock, record_unlock_if_earned
from migration_evals.miners.tracking import TrackedPR, note_check, track_pr
from tests.conftest import LEDGER_KEY, write_checkpoint_key
from tests.core.test_store import _trial

KEY = ChainKey(LEDGER_KEY.encode())
NOW = datetime(2026, 6, 1, tzinfo=UTC)


def _open(tmp_path: Path, key: ChainKey = KEY, *, signer: bool = True) -> Store:
    pem = tmp_path / "checkpoint.pem"
    if signer and not pem.exists():
        write_checkpoint_key(pem)
    keys = LedgerKeys(chain=key, signer=CheckpointSigner.from_pem(pem) if signer else None)
    return Store.open(f"sqlite:///{tmp_path / 'ledger.db'}", keys=keys)


def _sql(store: Store, statement: str) -> None:
    path = store.db.engine.url.database
    assert path
    with sqlite3.connect(path) as raw:
        raw.execute(statement)


def test_a_keyed_link_is_not_the_unkeyed_one_and_survives_pickling() -> None:
    text = "0" * 64 + "\n{}\n{}"
    assert KEY.link(text) != UNKEYED.link(text) != ChainKey(b"x" * 16).link(text)
    copy = pickle.loads(pickle.dumps(KEY))  # noqa: S301 - what scan workers receive
    assert (copy.key_id, copy.link(text)) == (KEY.key_id, KEY.link(text))
    assert LEDGER_KEY not in repr(KEY)
    with pytest.raises(ValueError, match="must not be empty"):
        ChainKey(b"")


def test_a_keyed_ledger_verifies_and_refuses_other_keys(tmp_path: Path) -> None:
    store = _open(tmp_path)
    for n in range(3):
        store.ledger.append_trial(_trial(n), {})
    check = store.ledger.verify_ledger()
    assert check.ok and check.keyed and check.key_id == KEY.key_id
    store.close()
    for other, said in ((UNKEYED, "is not set"), (ChainKey(b"y" * 20), "the key is wrong")):
        wrong = _open(tmp_path, other, signer=False)
        with pytest.raises(StoreError, match=said):
            wrong.ledger.append_trial(_trial(9), {})
        assert said in wrong.ledger.verify_ledger().problems[0]
        wrong.close()


def test_an_unkeyed_ledger_is_not_extended_under_a_key(tmp_path: Path) -> None:
    store = _open(tmp_path, UNKEYED, signer=False)
    store.ledger.append_trial(_trial(1), {})
    store.close()
    keyed = _open(tmp_path, signer=False)
    with pytest.raises(StoreError, match="chained without a key"):
        keyed.ledger.append_trial(_trial(2), {})
    assert keyed.ledger.head()[0] == 1  # nothing written
    keyed.close()


def test_a_forged_or_foreign_checkpoint_is_refused(tmp_path: Path) -> None:
    store = _open(tmp_path)
    store.ledger.append_trial(_trial(1), {})
    first = store.ledger.checkpoint()
    assert (first.number, first.ledger_seq) == (1, 1)
    assert store.ledger.verify_ledger().checkpoint == first
    # A different first digit, whatever it was (one hash in 16 starts with any given one).
    _sql(
        store,
        "UPDATE ledger_checkpoints SET ledger_hash = CASE substr(ledger_hash, 1, 1)"
        " WHEN '0' THEN '1' ELSE '0' END || substr(ledger_hash, 2)",
    )
    assert store.ledger.verify_ledger().problems == (
        f"{first.describe()}: the signature does not verify (forged or edited)",
    )
    other = CheckpointVerifier.from_pem(write_checkpoint_key(tmp_path / "other.pem"))
    foreign = Store.attach(
        store.db.engine.url.render_as_string(False), LedgerKeys(KEY, None, other)
    )
    assert "not by the configured public key" in foreign.ledger.verify_ledger().problems[0]
    foreign.close()
    store.close()


def test_checkpoints_refuse_to_sign_over_a_cut_chain_or_off_it(tmp_path: Path) -> None:
    store = _open(tmp_path)
    for n in range(3):
        store.ledger.append_trial(_trial(n), {})
    store.ledger.checkpoint()
    with pytest.raises(StoreError, match="not on the ledger's chain"):
        store.ledger.checkpoint(at=(2, "0" * 64))
    _sql(store, "DELETE FROM ledger WHERE seq = 3")
    _sql(
        store,
        "UPDATE ledger_head SET seq = 2, row_hash = (SELECT row_hash FROM ledger WHERE seq = 2)",
    )
    with pytest.raises(StoreError, match="no checkpoint was written"):
        store.ledger.checkpoint()
    assert len(store.ledger.checkpoints()) == 1
    store.close()


def test_checkpoints_need_a_key_and_say_how_to_make_one(tmp_path: Path) -> None:
    store = _open(tmp_path, signer=False)
    with pytest.raises(ConfigError, match="openssl genpkey -algorithm ed25519"):
        store.ledger.checkpoint()
    store.close()
    (tmp_path / "not.pem").write_text("hello")
    with pytest.raises(ConfigError, match="not an unencrypted PEM private key"):
        CheckpointSigner.from_pem(tmp_path / "not.pem")
    with pytest.raises(ConfigError, match="cannot read the checkpoint key"):
        CheckpointSigner.from_pem(tmp_path / "missing.pem")


def _pr(number: int, merged: datetime | None = None) -> TrackedPR:
    return TrackedPR(
        repo="example/repo",
        number=number,
        head_sha="a" * 40,
        base_sha="b" * 40,
        author="agent[bot]",
        is_agent=True,
        opened_at=datetime(2025, 12, 1, tzinfo=UTC),
        merged_at=merged,
        closed_at=merged,
        changeset_id=None,
    )


def test_tracked_prs_gold_and_the_unlock_are_chained(tmp_path: Path) -> None:
    store = _open(tmp_path)
    policy = SurvivalPolicy(unlock_prs=1, window_days=30)
    track_pr(store.ledger, _pr(1))
    track_pr(store.ledger, _pr(1, merged=datetime(2026, 1, 1, tzinfo=UTC)))  # an update
    note_check(store.ledger, _pr(1), NOW, "rate limited")
    label = GoldRow("example/repo", 1, GoldLabel.ACCEPTED, NOW)
    upsert_gold(store.ledger, label)
    upsert_gold(store.ledger, label)  # recomputed: replaced, recorded again
    assert record_unlock_if_earned(store.db, store.ledger, NOW, policy)[1] and current_unlock(
        store.db
    )
    assert store.ledger.verify_ledger().ok
    store.ledger.checkpoint()

    _sql(store, "UPDATE tracked_prs SET merged_at = NULL")
    _sql(store, "DELETE FROM retro_unlock")
    assert store.ledger.verify_ledger().problems == (
        'tracked_pr row ["example/repo",1]: differs from its last record (edited)',
        "retro_unlock row [1]: recorded but missing from the table (deleted)",
    )
    _sql(store, "DELETE FROM record_log WHERE seq = (SELECT max(seq) FROM record_log)")
    assert any("covers record" in p for p in store.ledger.verify_ledger().problems)
    store.close()
