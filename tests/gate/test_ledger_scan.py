"""The gate's ledger scan: the same chain verdict as ``Ledger.verify_ledger``, serial or split
over processes, and the facts each trial contributes."""

from __future__ import annotations

import multiprocessing
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from migration_evals.core.chain import ChainKey
from migration_evals.core.integrity import LedgerKeys
from migration_evals.core.model import FabricatedMark, Tier, Verdict
from migration_evals.core.specs import SpecSet
from migration_evals.core.store import GENESIS_HASH, Store, row_hash
from migration_evals.gate.ledger_scan import _COLUMNS, content_hash, scan_ledger
from migration_evals.gate.trials import Outcome
from tests.gate.ledgers import POST, SANDBOX_S, TOKENS, Plan, append, balanced, build_trial

ROW = {
    "seq": 12,
    "recorded_at": "2026-11-29T10:00:00.000001+00:00",
    "run_id": "r-1",
    "trial_id": "t-1",
    "changeset_id": "c",
    "model": "gpt-5",
    "recipe": "java8-to-17",
    "tier": "apply",
    "verdict": "pass",
    "fabricated": False,
    "cache_key": "k" * 64,
    "payload": '{"a":1}',
    "prev_hash": GENESIS_HASH,
}


def test_the_columns_are_where_content_hash_reads_them() -> None:
    # Spelled out: reordering the store's hashed columns must fail here, not corrupt hashes.
    assert (
        *("seq", "recorded_at", "run_id", "trial_id", "changeset_id", "model", "recipe"),
        *("tier", "verdict", "fabricated", "cache_key", "payload", "prev_hash", "row_hash"),
    ) == _COLUMNS


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"changeset_id": 'quote " backslash \\ slash / tab \t newline \n'},
        {"changeset_id": "control \x01\x1f del \x7f", "model": "ünïcødé ✓ 漢字"},
        {"run_id": "emoji 🙂 and surrogate-free", "fabricated": True, "seq": 10**12},
        {"recipe": "\u2028 line separator \u2029", "payload": '{"x":"é"}'},
    ],
)
@pytest.mark.parametrize("key", [ChainKey(), ChainKey(b"k" * 32)], ids=repr)
def test_content_hash_equals_the_stores_row_hash(changes: dict[str, object], key: ChainKey) -> None:
    row = {**ROW, **changes}
    values = [row[name] for name in _COLUMNS[:13]]
    assert content_hash(values, key) == row_hash(str(row["prev_hash"]), row, key)


def test_content_hash_falls_back_for_unexpected_types() -> None:
    row = {**ROW, "fabricated": 1, "seq": 12}
    values = [row[name] for name in _COLUMNS[:13]]
    values[0] = 12.0  # not an int: the generic path decides
    assert content_hash(values) == row_hash(GENESIS_HASH, {**row, "seq": 12.0})


def _sql(store: Store, *statements: str) -> None:
    path = store.db.engine.url.database
    assert path
    with sqlite3.connect(path) as raw:
        for statement in statements:
            raw.execute(statement)


TAMPERING = {
    "edited": ("UPDATE ledger SET payload = replace(payload, '0.001', '0.002') WHERE seq = 5",),
    "deleted middle": ("DELETE FROM ledger WHERE seq = 9",),
    "deleted last": ("DELETE FROM ledger WHERE seq = (SELECT max(seq) FROM ledger)",),
    "reordered": (
        "UPDATE ledger SET seq = -1 WHERE seq = 3",
        "UPDATE ledger SET seq = 3 WHERE seq = 4",
        "UPDATE ledger SET seq = 4 WHERE seq = -1",
    ),
    "appended past the head": (
        "INSERT INTO ledger SELECT seq + 1000, recorded_at, run_id, trial_id, changeset_id, "
        "model, recipe, tier, verdict, fabricated, cache_key, payload, prev_hash, row_hash "
        "FROM ledger WHERE seq = 1",
    ),
}


@pytest.mark.parametrize("keyed", [False, True], ids=["unkeyed", "keyed"])
@pytest.mark.parametrize("workers", [1, 3])
@pytest.mark.parametrize("how", sorted(TAMPERING))
def test_problems_are_worded_as_verify_ledger_words_them(
    tmp_path: Path, gate_specs: SpecSet, how: str, workers: int, keyed: bool
) -> None:
    keys = LedgerKeys(chain=ChainKey(b"scan-key-0123456789abcdef" if keyed else None))
    store = Store.open(f"sqlite:///{tmp_path / 'keyed.db'}", keys=keys)
    append(store, gate_specs, balanced(per_bucket=2))
    _sql(store, *TAMPERING[how])
    expected = store.ledger.verify_ledger()
    scan = scan_ledger(store, workers=workers, parallel_min_rows=1)
    assert not expected.ok and not scan.chain.ok
    if how == "appended past the head":  # the store walks past the head; the scan stops there
        assert set(scan.chain.problems) < set(expected.problems)
    else:
        assert scan.chain.problems == expected.problems
        assert scan.chain.rows == expected.rows
    store.close()


def test_a_clean_chain_matches_verify_ledger(store: Store, gate_specs: SpecSet) -> None:
    append(store, gate_specs, balanced(per_bucket=2))
    expected = store.ledger.verify_ledger()
    scan = scan_ledger(store)
    assert scan.chain.ok and expected.ok
    assert (scan.chain.rows, scan.chain.head_hash) == (expected.rows, expected.head_hash)
    assert scan.chain.head_seq == store.ledger.head()[0]


def test_a_split_scan_gathers_the_same_trials(store: Store, gate_specs: SpecSet) -> None:
    mark = FabricatedMark("judge", "k", "path", "no cassette")
    odd = [
        Plan("strict", strict=("pass", "fail")),
        Plan("marked", marks={Tier.JUDGE: (mark,)}),
        Plan("cached", cached=True),
        Plan("broke", outcome="error@compile", created=POST),
    ]
    append(store, gate_specs, [*balanced(per_bucket=3), *odd])
    serial = scan_ledger(store)
    # 7 ranges over 88 rows: several trials are cut by a range boundary, and the trials
    # built in worker processes travel back as plain values (every field must survive).
    split = scan_ledger(store, workers=7, parallel_min_rows=1)
    assert split == serial
    assert len(serial.trials) == 22
    facts = {t.changeset_id: t for t in serial.trials}
    assert facts["strict"].judge_opinion is not None and facts["strict"].judge_pair
    assert facts["marked"].marks and facts["broke"].error_reason


@pytest.mark.parametrize("workers", [1, 3])
def test_meanwhile_runs_once_after_the_workers_exist(
    store: Store, gate_specs: SpecSet, workers: int
) -> None:
    append(store, gate_specs, balanced(per_bucket=2))
    children: list[int] = []
    scan_ledger(
        store,
        workers=workers,
        parallel_min_rows=1,
        meanwhile=lambda: children.append(len(multiprocessing.active_children())),
    )
    # A thread started by ``meanwhile`` (scipy's preload) must not be forked mid-import.
    assert children == [workers - 1]


def test_an_in_memory_database_is_scanned_in_process(gate_specs: SpecSet) -> None:
    store = Store.open("sqlite://")
    append(store, gate_specs, balanced(per_bucket=1))
    assert scan_ledger(store, workers=4, parallel_min_rows=1).chain.ok


def test_upto_seq_scans_the_ledger_as_it_stood(store: Store, gate_specs: SpecSet) -> None:
    append(store, gate_specs, balanced(per_bucket=1))
    head_seq, head_hash = store.ledger.head()
    append(store, gate_specs, [Plan("later", run_id="run-2")])
    scan = scan_ledger(store, upto_seq=head_seq)
    assert (scan.chain.head_seq, scan.chain.head_hash) == (head_seq, head_hash)
    assert all(t.run_id == "run-1" for t in scan.trials)
    assert len(scan_ledger(store).trials) == len(scan.trials) + 1


def test_trial_facts(store: Store, gate_specs: SpecSet) -> None:
    plans = [
        Plan("passes", strict=("pass", "fail")),
        Plan("errors", outcome="error@tests"),
        Plan("flaky", outcome="inconclusive@tests"),
        Plan("unfunded", outcome="budget@compile"),
        Plan("reused", cached=True),
    ]
    append(store, gate_specs, plans)
    trials = {t.changeset_id: t for t in scan_ledger(store).trials}
    passes = trials["passes"]
    assert passes.outcome is Outcome.PASSED
    assert passes.sandbox_s == SANDBOX_S[Tier.COMPILE] + SANDBOX_S[Tier.TESTS]
    assert passes.judge_tokens == (2 * TOKENS[0], 2 * TOKENS[1])
    assert passes.judge_pair == ("pass", "fail") and passes.judge_strict
    assert passes.stamps == (gate_specs.stamps_for("java8-to-17"),)
    assert [t.verdict for t in passes.tiers] == [Verdict.PASS] * 4
    assert trials["errors"].outcome is Outcome.ERROR
    assert trials["errors"].error_reason == "tests: infrastructure error: engine down"
    assert trials["flaky"].outcome is Outcome.INCONCLUSIVE
    assert trials["unfunded"].outcome is Outcome.NOT_GRADED
    reused = trials["reused"]
    assert (reused.sandbox_s, reused.judge_usd, reused.judge_tokens) == (0.0, 0.0, (0, 0))
    assert all(t.cached for t in reused.tiers)


def test_a_trial_digest_covers_its_rows(store: Store, gate_specs: SpecSet) -> None:
    append(store, gate_specs, [Plan("a"), replace(Plan("b"), outcome="fail@apply")])
    first = scan_ledger(store).trials
    assert len({t.digest for t in first}) == 2
    _sql(store, "UPDATE ledger SET payload = replace(payload, 'patch', 'PATCH') WHERE seq = 2")
    assert scan_ledger(store).trials[0].digest == first[0].digest  # the stored hash is kept...
    assert not scan_ledger(store).chain.ok  # ...and the chain says the row no longer matches it


def test_interleaved_trials_fall_back_to_one_range(store: Store, gate_specs: SpecSet) -> None:
    plans = balanced(per_bucket=4)
    trials = [build_trial(p, gate_specs, f"t{n}") for n, p in enumerate(plans)]
    trials[3] = build_trial(plans[3], gate_specs, "t-twice")
    trials[20] = build_trial(plans[20], gate_specs, "t-twice")  # the same id, far apart
    store.ledger.append_trials([(t, {}) for t in trials])
    serial = scan_ledger(store)
    split = scan_ledger(store, workers=3, parallel_min_rows=1)
    assert split == serial
    twice = next(t for t in serial.trials if t.trial_id == "t-twice")
    assert len(twice.tiers) == 8


def test_an_unknown_creation_date_stays_unknown_through_the_ledger(
    store: Store, gate_specs: SpecSet
) -> None:
    append(store, gate_specs, [Plan("dated"), Plan("undated", created=None)])
    for workers in (1, 2):
        trials = {t.changeset_id: t for t in scan_ledger(store, workers=workers).trials}
        assert trials["undated"].repo_created_at is None
        assert trials["dated"].repo_created_at is not None
