"""A ledger a writer without the key cannot rewrite: ``ledger verify``, ``gate check`` and
``verify BUNDLE`` each refuse a truncated-and-reheaded ledger, an edited-and-rechained
one and forged gold rows; checkpoints are signed, bundled and checked."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import sqlalchemy as sa

from migration_evals.bot.cli import main
from migration_evals.bot.exits import ExitStatus
from migration_evals.bot.ledger_keys import open_store
from migration_evals.bot.settings import settings_from_env
from migration_evals.core.chain import CHAIN_COLUMNS, UNKEYED, row_hash
from migration_evals.core.specs import SpecSet
from migration_evals.core.stamps import canonical_json
from migration_evals.core.store import Store, ledger_table
from tests.conftest import LEDGER_KEY, write_checkpoint_key
from tests.gate.ledgers import add_gold, append, balanced

Tamper = Callable[[str], None]
Publish = Callable[[], dict[str, object]]


@pytest.fixture(scope="session")
def _checkpoint_key(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One checkpoint key for the worker's tests, so that a ledger ``published`` signed for
    one test verifies under the key of the next."""
    return write_checkpoint_key(tmp_path_factory.mktemp("checkpoint-key") / "checkpoint.pem")


@pytest.fixture(params=["keyed", "unkeyed"])
def keyed(
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    _checkpoint_key: Path,
) -> bool:
    """Both kinds of ledger, each with a checkpoint key (what catches truncation)."""
    if request.param == "keyed":
        monkeypatch.setenv("MIGRATION_EVALS_LEDGER_KEY", LEDGER_KEY)
    key = tmp_path / "checkpoint.pem"
    shutil.copyfile(_checkpoint_key, key)
    monkeypatch.setenv("MIGRATION_EVALS_CHECKPOINT_KEY", str(key))
    return bool(request.param == "keyed")


def _url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'results.db'}"


def _published(gate_env: SpecSet, tmp_path: Path, *, gold: bool = True) -> dict[str, object]:
    """A ledger written through the store with the environment's keys, checkpointed and
    published; the bundle."""
    store = open_store(settings_from_env())
    append(store, gate_env, balanced())
    if gold:
        add_gold(store)
    store.close()
    assert main(["gate", "publish", "--out", "bundle.json"]) == 0
    bundle: dict[str, object] = json.loads((tmp_path / "bundle.json").read_text())
    return bundle


# What ``gate publish`` leaves in the test's folder: the ledger (and its write-ahead log,
# should one be left) and the bundle.
PUBLISHED_FILES = ("results.db", "results.db-wal", "bundle.json")


@pytest.fixture(scope="session")
def _published_ledgers() -> dict[tuple[str | None, str | None], Path]:
    """Folders of ledgers ``published`` wrote, by the keys they were written under."""
    return {}


@pytest.fixture
def published(
    gate_env: SpecSet,
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
    _published_ledgers: dict[tuple[str | None, str | None], Path],
) -> Publish:
    """``_published`` under the environment's keys, written once per worker for each kind of
    ledger and copied into the test's folder after that: writing and publishing 480 rows
    took about a third of a second for each of the tests that tamper with them."""

    def publish() -> dict[str, object]:
        checkpoint_key = os.environ.get("MIGRATION_EVALS_CHECKPOINT_KEY")
        kind = (
            os.environ.get("MIGRATION_EVALS_LEDGER_KEY"),
            Path(checkpoint_key).read_text() if checkpoint_key else None,
        )
        kept = _published_ledgers.get(kind)
        if kept is None:
            bundle = _published(gate_env, tmp_path)
            kept = _published_ledgers[kind] = tmp_path_factory.mktemp("published")
            _copy_published(tmp_path, kept)
            return bundle
        _copy_published(kept, tmp_path)
        loaded: dict[str, object] = json.loads((tmp_path / "bundle.json").read_text())
        return loaded

    return publish


def _copy_published(source: Path, dest: Path) -> None:
    for name in PUBLISHED_FILES:
        if (source / name).exists():
            shutil.copyfile(source / name, dest / name)


def _rows(conn: sa.Connection) -> list[dict[str, object]]:
    query = sa.select(*(ledger_table.c[name] for name in CHAIN_COLUMNS)).order_by(
        ledger_table.c.seq
    )
    return [dict(row) for row in conn.execute(query).mappings()]


def truncate_and_rehead(url: str) -> None:
    """Delete the newest trial's rows and move the head back to the row before them:
    no link needs recomputing, so a key alone cannot catch it."""
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        rows = _rows(conn)
        last_trial = rows[-1]["trial_id"]
        kept = [row for row in rows if row["trial_id"] != last_trial]
        conn.execute(sa.text("DELETE FROM ledger WHERE trial_id = :t"), {"t": last_trial})
        conn.execute(sa.text("DELETE FROM trial_slots WHERE trial_id = :t"), {"t": last_trial})
        conn.execute(
            sa.text("UPDATE ledger_head SET seq = :s, row_hash = :h WHERE id = 1"),
            {"s": kept[-1]["seq"], "h": kept[-1]["row_hash"]},
        )
    engine.dispose()


def edit_and_rechain(url: str) -> None:
    """Turn the first failing tier into a pass and recompute every link after it, as a
    writer without the key can: with plain SHA-256."""
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        rows = _rows(conn)
        at = next(i for i, row in enumerate(rows) if row["verdict"] == "fail")
        payload = json.loads(str(rows[at]["payload"]))
        payload["envelope"]["verdict"] = "pass"
        rows[at].update(verdict="pass", payload=canonical_json(payload))
        prev = str(rows[at]["prev_hash"])
        for row in rows[at:]:
            row["prev_hash"], row["row_hash"] = prev, row_hash(prev, row, UNKEYED)
            prev = str(row["row_hash"])
            conn.execute(
                sa.text(
                    "UPDATE ledger SET verdict = :verdict, payload = :payload, "
                    "prev_hash = :prev_hash, row_hash = :row_hash WHERE seq = :seq"
                ),
                row,
            )
        conn.execute(sa.text("UPDATE ledger_head SET row_hash = :h WHERE id = 1"), {"h": prev})
    engine.dispose()


def _problems(capsys: pytest.CaptureFixture[str]) -> list[str]:
    """``ledger verify --json``'s problems, after checking that it refused."""
    capsys.readouterr()  # what came before
    code = main(["ledger", "verify", "--json"])
    document = json.loads(capsys.readouterr().out)
    assert code == ExitStatus.LEDGER_TAMPERED and document["ok"] is False
    return [str(problem) for problem in document["problems"]]


@pytest.mark.parametrize("tamper", [truncate_and_rehead, edit_and_rechain])
def test_tampering_is_refused_by_every_command(
    gate_env: SpecSet,
    published: Publish,
    keyed: bool,
    tmp_path: Path,
    tamper: Tamper,
    capsys: pytest.CaptureFixture[str],
) -> None:
    published()
    assert main(["ledger", "verify"]) == 0
    capsys.readouterr()
    tamper(_url(tmp_path))

    problems = "\n".join(_problems(capsys))
    if tamper is truncate_and_rehead:
        assert "rows were removed from the end" in problems
    elif keyed:
        assert "content does not match its MAC" in problems
    else:  # an unkeyed chain recomputes cleanly: only the signed checkpoint tells
        assert "is not the signed one (the chain was recomputed)" in problems

    assert main(["gate", "check", "--json"]) == ExitStatus.GATE_REFUSED
    refusals = json.loads(capsys.readouterr().out)["refusals"]
    assert "ledger_tampered" in [r["code"] for r in refusals]

    assert main(["verify", "bundle.json", "--db", _url(tmp_path)]) == ExitStatus.BUNDLE_DIFFERS
    assert "ledger: " in capsys.readouterr().out


def test_a_smart_rechain_that_marks_the_ledger_unkeyed_is_refused_under_the_key(
    gate_env: SpecSet,
    published: Publish,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("MIGRATION_EVALS_LEDGER_KEY", LEDGER_KEY)  # no checkpoint key at all
    published()
    edit_and_rechain(_url(tmp_path))
    engine = sa.create_engine(_url(tmp_path))
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE meta SET value = 'unkeyed' WHERE key = 'ledger_key_id'"))
    engine.dispose()
    problems = _problems(capsys)
    assert any(
        "chained without a key, but MIGRATION_EVALS_LEDGER_KEY is set" in str(p) for p in problems
    )


def test_forged_gold_rows_are_refused(
    gate_env: SpecSet, keyed: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = open_store(settings_from_env())
    append(store, gate_env, balanced())
    store.close()
    assert main(["gate", "check", "--json"]) == ExitStatus.GATE_REFUSED  # broken_anchor
    capsys.readouterr()
    # 40 labels written straight into the table: enough to lift the anchor's refusal.
    engine = sa.create_engine(_url(tmp_path))
    with engine.begin() as conn:
        for number in range(1, 41):
            verdict, label = ("pass", "accepted") if number <= 20 else ("fail", "rejected")
            conn.execute(
                sa.text(
                    "INSERT INTO gold (repo, pr_number, label, evidence, computed_at, "
                    "funnel_verdict) VALUES ('forged/gold', :n, :label, '{}', "
                    "'2026-01-01T00:00:00+00:00', :verdict)"
                ),
                {"n": number, "label": label, "verdict": verdict},
            )
    engine.dispose()
    problems = _problems(capsys)
    assert len(problems) == 40
    assert 'gold row ["forged/gold",1]: not in the record chain (forged)' in problems
    assert main(["gate", "check", "--json"]) == ExitStatus.GATE_REFUSED
    codes = [r["code"] for r in json.loads(capsys.readouterr().out)["refusals"]]
    assert codes == ["ledger_tampered"]


def test_an_edited_gold_label_is_refused(
    gate_env: SpecSet,
    published: Publish,
    keyed: bool,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    published()
    engine = sa.create_engine(_url(tmp_path))
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE gold SET label = 'accepted' WHERE pr_number = 21"))
    engine.dispose()
    problems = _problems(capsys)
    assert problems == ['gold row ["example/gold",21]: differs from its last record (edited)']


def test_the_bundle_carries_a_checkpoint_its_public_key_verifies(
    gate_env: SpecSet,
    published: Publish,
    keyed: bool,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    bundle = published()
    ledger = bundle["ledger"]
    assert isinstance(ledger, dict)
    assert ledger["checkpoint"]["ledger_seq"] == ledger["head_seq"]
    assert (ledger["key"] == "unkeyed") is not keyed
    assert main(["ledger", "checkpoint", "--public-key"]) == 0
    (tmp_path / "public.pem").write_text(capsys.readouterr().out)
    assert main(["verify", "bundle.json", "--public-key", "public.pem"]) == 0
    capsys.readouterr()

    ledger["checkpoint"]["ledger_hash"] = "f" * 64  # and the head with it: one story
    ledger["head_hash"] = "f" * 64
    (tmp_path / "forged.json").write_text(json.dumps(bundle))
    code = main(["verify", "forged.json", "--public-key", "public.pem"])
    out = capsys.readouterr().out
    assert code == ExitStatus.BUNDLE_DIFFERS
    assert "ledger.checkpoint: checkpoint" in out and "does not verify (forged or edited)" in out


def test_a_bundle_signed_by_another_key_is_refused(
    gate_env: SpecSet,
    published: Publish,
    keyed: bool,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    published()
    other = write_checkpoint_key(tmp_path / "other.pem")
    assert main(["verify", "bundle.json", "--public-key", str(other)]) == ExitStatus.BUNDLE_DIFFERS
    assert "not by the configured public key" in capsys.readouterr().out


def test_a_checkpoint_is_signed_on_demand_and_refused_over_a_cut_ledger(
    gate_env: SpecSet,
    published: Publish,
    keyed: bool,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    published()
    capsys.readouterr()
    assert main(["ledger", "checkpoint", "--json"]) == 0
    signed = json.loads(capsys.readouterr().out)
    assert signed["number"] == 2 and signed["ledger_seq"] > 0
    truncate_and_rehead(_url(tmp_path))
    assert main(["ledger", "checkpoint"]) == ExitStatus.LEDGER_TAMPERED
    assert "no checkpoint written" in capsys.readouterr().err
    store = Store.attach(_url(tmp_path))
    assert len(store.ledger.checkpoints()) == 2
    store.close()


def test_a_wrong_key_is_named_once(
    gate_env: SpecSet,
    published: Publish,
    keyed: bool,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    published()
    monkeypatch.setenv("MIGRATION_EVALS_LEDGER_KEY", "another-key-entirely-0123456789")
    problems = _problems(capsys)
    assert isinstance(problems, list)
    expected = "the key is wrong" if keyed else "chained without a key, but"
    assert expected in problems[0]
    assert len(problems) <= 3  # the cause, the count of rows it fails, the checkpoints


def test_a_short_ledger_key_is_a_configuration_error(
    gate_env: SpecSet, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MIGRATION_EVALS_LEDGER_KEY", "short")
    assert main(["ledger", "verify"]) == ExitStatus.ERROR
    assert "use at least 16 random ones" in capsys.readouterr().err
