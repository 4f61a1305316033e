"""``gold export`` and ``gold import`` end to end: a signed anchor travels to another
ledger, the gate there counts it and names where it came from; an edited anchor and one
graded under other specs are refused with their own exit status."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from migration_evals.bot.cli import main
from migration_evals.bot.exits import ExitStatus
from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from tests.conftest import pre_register_no_judge, write_checkpoint_key
from tests.gate.ledgers import append, balanced
from tests.gate.test_shared_anchor import graded_gold


@pytest.fixture
def exported(
    gate_env: SpecSet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, str]:
    """A team's anchor, exported signed from its ledger; returns the file and the other
    team's database URL (with graded trials and no gold labels of its own)."""
    key = write_checkpoint_key(tmp_path / "checkpoint.pem")
    monkeypatch.setenv("MIGRATION_EVALS_CHECKPOINT_KEY", str(key))
    theirs = Store.open(f"sqlite:///{tmp_path / 'results.db'}")
    graded_gold(theirs, gate_env)
    theirs.close()
    assert main(["gold", "export", "--out", "ANCHOR.json"]) == 0
    ours = f"sqlite:///{tmp_path / 'ours.db'}"
    store = Store.open(ours)
    append(store, gate_env, balanced())
    store.close()
    return tmp_path / "ANCHOR.json", ours


def test_export_then_import_and_the_gate_names_the_anchor(
    exported: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    anchor, ours = exported
    assert main(["gold", "export", "--out", "AGAIN.json"]) == 0
    out = capsys.readouterr().out
    assert "exported 34 gold label(s) and 34 trial(s) to AGAIN.json" in out
    assert "phi=0.889 over 34 gold-labelled pull requests" in out and "signed by key" in out
    assert main(["gate", "check", "--db", ours]) == ExitStatus.GATE_REFUSED  # no anchor yet
    capsys.readouterr()
    assert main(["gold", "import", "ANCHOR.json", "--db", ours]) == 0
    out = capsys.readouterr().out
    assert "imported 34 gold label(s) from ANCHOR.json" in out
    assert "gold anchor now: phi=" in out
    assert main(["gate", "check", "--db", ours]) == 0
    out = capsys.readouterr().out
    digest = json.loads(anchor.read_text())["anchor_digest"]
    assert f"gold anchor: 34 label(s) imported from ANCHOR.json (anchor {digest[:16]}" in out
    assert main(["gate", "check", "--db", ours, "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["anchor"]["sources"][0]["origin"] == "ANCHOR.json"
    assert main(["gold", "import", "ANCHOR.json", "--db", ours]) == 0  # again: the same rows


def test_an_edited_anchor_is_refused(
    exported: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    anchor, ours = exported
    document = json.loads(anchor.read_text())
    document["labels"][0]["label"] = "rejected"
    (tmp_path / "EDITED.json").write_text(json.dumps(document))
    capsys.readouterr()
    assert main(["gold", "import", "EDITED.json", "--db", ours]) == ExitStatus.ANCHOR_REFUSED
    err = capsys.readouterr().err
    assert "gold import: refused: EDITED.json does not verify" in err
    assert "the document was changed after it was exported" in err
    assert main(["gate", "check", "--db", ours, "--json"]) == ExitStatus.GATE_REFUSED
    assert "sources" not in json.loads(capsys.readouterr().out)["anchor"]  # nothing imported


def test_an_anchor_graded_under_other_specs_is_refused(
    exported: tuple[Path, str],
    specs_dir: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, ours = exported
    pre_register_no_judge(specs_dir)  # the specs moved on since the anchor was graded
    capsys.readouterr()
    assert main(["gold", "import", "ANCHOR.json", "--db", ours]) == ExitStatus.ANCHOR_REFUSED
    err = capsys.readouterr().err
    assert "refused: ANCHOR.json was graded under other specs: the oracle spec changed" in err
