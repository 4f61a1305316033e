"""Checkpoints on by default, and a witness outside the database: the default key is made
on first use (its public half printed), bundles carry the signed head, and ``ledger verify
--witness`` catches rows deleted together with the checkpoints over them, which the
ledger's own checkpoints cannot."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
import sqlalchemy as sa

from migration_evals.bot.cli import main
from migration_evals.bot.exits import ExitStatus
from migration_evals.core.checkpoints import WITNESS_FORMAT, CheckpointSigner
from migration_evals.core.specs import SpecSet
from tests.bot.test_ledger_cli import _published, _url, truncate_and_rehead


@pytest.fixture
def config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No checkpoint setting at all: the default key, in a configuration folder of its own."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("MIGRATION_EVALS_CHECKPOINT_KEY", raising=False)
    monkeypatch.delenv("MIGRATION_EVALS_CHECKPOINT_PUBLIC_KEY", raising=False)
    return tmp_path / "config" / "migration-evals" / "checkpoint-key.pem"


def _delete_rows_and_their_checkpoints(url: str) -> None:
    """What a writer of the database can do that the ledger's checkpoints cannot tell:
    cut the newest rows, move the head back, and delete every checkpoint past it."""
    truncate_and_rehead(url)
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        head = conn.execute(sa.text("SELECT seq FROM ledger_head WHERE id = 1")).scalar_one()
        conn.execute(sa.text("DELETE FROM ledger_checkpoints WHERE ledger_seq > :s"), {"s": head})
    engine.dispose()


def _verify(capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, dict[str, object]]:
    capsys.readouterr()
    code = main(["ledger", "verify", "--json", *extra])
    return code, json.loads(capsys.readouterr().out)


def test_the_key_is_made_on_first_use_outside_the_database_and_its_public_half_printed(
    gate_env: SpecSet, config_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert not config_home.exists()
    assert main(["ledger", "checkpoint", "--public-key"]) == 0
    out, err = capsys.readouterr()
    assert f"made a checkpoint signing key at {config_home}" in err
    assert stat.S_IMODE(config_home.stat().st_mode) == 0o600
    public = CheckpointSigner.from_pem(config_home).verifier().public_pem()
    assert out == public and public in err  # printed when made, and by the command
    assert main(["ledger", "checkpoint", "--public-key"]) == 0
    out, err = capsys.readouterr()
    assert out == public and "made a checkpoint" not in err  # the same key, kept


def test_checkpoints_can_be_turned_off(
    gate_env: SpecSet,
    config_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("MIGRATION_EVALS_CHECKPOINT_KEY", "off")
    assert main(["ledger", "checkpoint"]) == ExitStatus.ERROR
    assert "MIGRATION_EVALS_CHECKPOINT_KEY is `off`" in capsys.readouterr().err
    assert not config_home.exists()


def test_without_any_setting_the_bundle_carries_the_signed_head(
    gate_env: SpecSet,
    config_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    bundle = _published(gate_env, tmp_path)
    ledger = bundle["ledger"]
    assert isinstance(ledger, dict) and ledger["checkpoint"] is not None
    signer = CheckpointSigner.from_pem(config_home).verifier()
    assert ledger["checkpoint"]["signer"] == signer.key_id
    assert (ledger["checkpoint"]["ledger_seq"], ledger["checkpoint"]["ledger_hash"]) == (
        ledger["head_seq"],
        ledger["head_hash"],
    )
    capsys.readouterr()
    assert main(["verify", "bundle.json"]) == 0  # checked with the default key's public half
    assert "signature not checked" not in capsys.readouterr().err
    # On a machine whose default key is another: a note asking for the public key, not a
    # refusal (that machine's key never signed this bundle).
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "elsewhere"))
    assert main(["verify", "bundle.json"]) == 0
    assert "checkpoint signature not checked: pass the public key" in capsys.readouterr().err


def test_a_witness_catches_rows_and_checkpoints_deleted_together(
    gate_env: SpecSet, config_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _published(gate_env, tmp_path)
    witness = tmp_path / "kept-elsewhere" / "witness.json"
    witness.parent.mkdir()
    assert main(["ledger", "witness", "--out", str(witness)]) == 0
    document = json.loads(witness.read_text())
    assert document["format"] == WITNESS_FORMAT and "PUBLIC KEY" in document["public_key"]
    code, checked = _verify(capsys, "--witness", str(witness))
    assert code == 0 and checked["witness"] == document["checkpoint"]

    _delete_rows_and_their_checkpoints(_url(tmp_path))
    code, checked = _verify(capsys)
    assert code == 0, checked["problems"]  # the ledger agrees with itself: nothing tells
    for kept in (witness, tmp_path / "bundle.json"):  # a witness file, or a bundle
        code, checked = _verify(capsys, "--witness", str(kept))
        problems = "\n".join(map(str, checked["problems"]))
        assert code == ExitStatus.LEDGER_TAMPERED
        assert "but the chain ends at row" in problems and "rows were removed" in problems
        assert "not among the ledger's 0 stored checkpoint(s)" in problems


def test_a_forged_witness_is_refused_and_a_file_that_is_none_is_named(
    gate_env: SpecSet, config_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _published(gate_env, tmp_path)
    assert main(["ledger", "witness", "--out", "witness.json"]) == 0
    document = json.loads((tmp_path / "witness.json").read_text())
    document["checkpoint"]["ledger_seq"] -= 1
    (tmp_path / "forged.json").write_text(json.dumps(document))
    code, checked = _verify(capsys, "--witness", "forged.json")
    assert code == ExitStatus.LEDGER_TAMPERED
    assert "the witness (row" in str(checked["problems"])
    assert "does not verify (forged or edited)" in str(checked["problems"])
    (tmp_path / "other.json").write_text('{"format": "something else"}')
    assert main(["ledger", "verify", "--witness", "other.json"]) == ExitStatus.ERROR
    assert "other.json cannot serve as a witness" in capsys.readouterr().err
