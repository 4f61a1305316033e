"""The gate's commands end to end: check, publish, verify and report."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from migration_evals.bot.cli import main
from migration_evals.bot.exits import ExitStatus
from migration_evals.bot.ledger_keys import open_store
from migration_evals.bot.settings import settings_from_env
from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from migration_evals.gate.refusals import REMEDIES, RefusalCode
from tests.conftest import LEDGER_KEY, write_checkpoint_key
from tests.gate.ledgers import add_gold, append, balanced


@pytest.fixture
def env(gate_env: SpecSet) -> SpecSet:
    return gate_env


def _ledger(env: SpecSet, tmp_path: Path, *, gold: bool = True) -> Store:
    store = Store.open(f"sqlite:///{tmp_path / 'results.db'}")
    append(store, env, balanced())
    if gold:
        add_gold(store)
    return store


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    code = main(list(argv))
    return code, json.loads(capsys.readouterr().out)


def test_check_passes_on_a_clean_ledger(
    env: SpecSet, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _ledger(env, tmp_path).close()
    code, document = _json(capsys, "gate", "check", "--json")
    assert (code, document["publishable"], document["refusals"]) == (0, True, [])
    assert document["ledger"]["key"] == "unkeyed"  # no MIGRATION_EVALS_LEDGER_KEY here
    assert main(["gate", "check"]) == 0
    out = capsys.readouterr()
    assert "PUBLISHABLE" in out.out and "UNKEYED" in out.out
    assert "MIGRATION_EVALS_LEDGER_KEY is not set" in out.err


def test_check_lists_refusals_and_exits_non_zero(
    env: SpecSet, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _ledger(env, tmp_path, gold=False).close()
    code, document = _json(capsys, "gate", "check", "--json")
    assert code == ExitStatus.GATE_REFUSED and document["publishable"] is False
    assert [r["code"] for r in document["refusals"]] == ["broken_anchor"]
    assert document["refusals"][0]["detail"].startswith("only 0 gold-labelled")


def test_publish_refuses_without_writing(
    env: SpecSet, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _ledger(env, tmp_path, gold=False).close()
    assert main(["gate", "publish", "--out", "bundle.json"]) == ExitStatus.GATE_REFUSED
    assert "no bundle written (broken_anchor)" in capsys.readouterr().err
    assert not (tmp_path / "bundle.json").exists()


def test_publish_then_verify(
    env: SpecSet, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _ledger(env, tmp_path).close()
    assert main(["gate", "publish", "--out", "bundle.json"]) == 0
    capsys.readouterr()
    assert main(["verify", "bundle.json"]) == 0
    assert capsys.readouterr().out.startswith("ok (bundle.json against specs)")
    db = f"sqlite:///{tmp_path / 'results.db'}"
    code, document = _json(capsys, "verify", "bundle.json", "--db", db, "--json")
    assert (code, document["ok"], document["differences"]) == (0, True, [])

    bundle = json.loads((tmp_path / "bundle.json").read_text())
    bundle["numbers"]["pass_rates"]["gemini-2.5-pro"]["rate"] = 0.75
    (tmp_path / "changed.json").write_text(json.dumps(bundle))
    assert main(["verify", "changed.json", "--db", db]) == ExitStatus.BUNDLE_DIFFERS
    out = capsys.readouterr().out
    assert "numbers.pass_rates.gemini-2.5-pro.rate: the bundle says 0.75, recomputed 0.5" in out


def test_verify_names_a_missing_file(env: SpecSet, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", "nowhere.json"]) == ExitStatus.ERROR
    assert "cannot read bundle nowhere.json" in capsys.readouterr().err


@pytest.mark.usefixtures("plots_not_drawn")
def test_report_writes_the_folder(
    env: SpecSet, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _ledger(env, tmp_path, gold=False).close()
    code, document = _json(capsys, "report", "--out", "out", "--json")
    assert code == 0 and document["publishable"] is False
    assert {p.name for p in (tmp_path / "out").iterdir()} >= {
        "index.html",
        "report.md",
        "report.json",
        "funnel.png",
    }


_LABELS = [c.value for c in RefusalCode if c is not RefusalCode.THRESHOLD]


@pytest.mark.parametrize(
    "label", [*_LABELS, "threshold:min_trials", "threshold:max_infra_error_rate"]
)
def test_every_refusal_names_a_command_that_exists(
    label: str, capsys: pytest.CaptureFixture[str]
) -> None:
    named = re.findall(r"`migration-evals ([a-z]+)(?: ([a-z]+))?", REMEDIES[label])
    assert named, REMEDIES[label]
    for command, action in named:
        with pytest.raises(SystemExit) as done:
            main([command, *([action] if action else []), "--help"])
        assert done.value.code == 0, (command, action, capsys.readouterr().err)


def test_a_refusal_shows_its_detail_then_what_addresses_it(
    env: SpecSet, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["gate", "check", "--json"]) == ExitStatus.GATE_REFUSED
    refusals = json.loads(capsys.readouterr().out)["refusals"]
    assert refusals
    for refusal in refusals:
        assert refusal["detail"].endswith(f". Next: {refusal['remedy']}")
        assert "`migration-evals " in refusal["remedy"]


def test_check_starts_after_the_gate_snapshot_and_full_walks_every_row(
    env: SpecSet,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MIGRATION_EVALS_LEDGER_KEY", LEDGER_KEY)
    key = write_checkpoint_key(tmp_path / "checkpoint.pem")
    monkeypatch.setenv("MIGRATION_EVALS_CHECKPOINT_KEY", str(key))
    store = open_store(settings_from_env())
    append(store, env, balanced())
    add_gold(store)
    store.ledger.checkpoint()
    store.close()
    assert _json(capsys, "gate", "check", "--json")[1]["ledger"]["resumed_at"] == 0  # keeps one
    with sqlite3.connect(tmp_path / "results.db") as conn:  # an edit below the snapshot
        conn.execute("UPDATE ledger SET payload = payload || ' ' WHERE seq = 9")
    code, document = _json(capsys, "gate", "check", "--json")
    assert (code, document["ledger"]["resumed_at"]) == (ExitStatus.OK, 480)
    assert main(["gate", "check"]) == ExitStatus.OK
    assert "480 row(s) (rows after 480 walked)" in capsys.readouterr().out
    code, document = _json(capsys, "gate", "check", "--json", "--full")
    assert (code, document["ledger"]["resumed_at"]) == (ExitStatus.GATE_REFUSED, 0)
    assert "row 9: content does not match" in document["refusals"][0]["detail"]


def test_the_gate_check_path_loads_neither_sandbox_machinery_nor_scipy() -> None:
    # A check reads the ledger and the specs and computes normal-theory statistics: the
    # Docker SDK, the registry gate's HTTP client and scipy each cost every check a tenth
    # of a second or more to load.
    probe = (
        "import json, sys\n"
        "import migration_evals.bot.commands.gate\n"
        "from migration_evals.oracles.ecosystems.registry import spec_vocabulary\n"
        "spec_vocabulary()\n"
        "from migration_evals.gate.stats import two_proportion_ztest, wilson_interval\n"
        "two_proportion_ztest(3, 10, 5, 10), wilson_interval(3, 10)\n"
        "loaded = sorted(m for m in ('docker', 'requests', 'scipy') if m in sys.modules)\n"
        "print(json.dumps(loaded))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == []
