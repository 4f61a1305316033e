"""An evaluation whose oracle spec pre-registers no LLM judge, through the gate's commands:
trials end at tier 3 and are publishable, and gate check, the bundle and the report say
"no judge"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from migration_evals.bot.cli import main
from migration_evals.core.model import Tier
from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from migration_evals.oracles.ecosystems.registry import load_specs
from tests.conftest import pre_register_no_judge
from tests.gate.ledgers import add_gold, append, balanced


@pytest.fixture
def no_judge_env(gate_env: SpecSet, specs_dir: Path, tmp_path: Path) -> SpecSet:
    """The gate's environment with the no-judge spec, and a clean ledger graded under it."""
    specs = load_specs(pre_register_no_judge(specs_dir))
    store = Store.open(f"sqlite:///{tmp_path / 'results.db'}")
    trials = append(store, specs, balanced())
    add_gold(store)
    store.close()
    assert {len(t.envelopes) for t in trials} == {3}  # graded as the spec says: no judge
    assert {e.tier for t in trials for e in t.envelopes} == {Tier.APPLY, Tier.COMPILE, Tier.TESTS}
    return specs


def test_the_gate_accepts_trials_that_end_at_tier_three_and_says_no_judge(
    no_judge_env: SpecSet, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["gate", "check", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert (document["publishable"], document["judging"]) == (True, "no judge")
    assert main(["gate", "check"]) == 0
    out = capsys.readouterr().out
    assert "PUBLISHABLE" in out
    assert "judging: no judge: the oracle spec pre-registers an evaluation without" in out


@pytest.mark.usefixtures("plots_not_drawn")
def test_the_bundle_and_the_report_say_no_judge(
    no_judge_env: SpecSet, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["gate", "publish", "--out", "bundle.json"]) == 0
    bundle = json.loads((tmp_path / "bundle.json").read_text())
    assert bundle["judging"] == "no judge"
    funnel = [row["tier"] for row in bundle["numbers"]["funnel"]]
    assert funnel == ["apply", "compile", "tests"]  # the judge is not counted as missing
    capsys.readouterr()
    db = f"sqlite:///{tmp_path / 'results.db'}"
    assert main(["verify", "bundle.json", "--db", db]) == 0
    assert main(["report", "--out", "out"]) == 0
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["judging"]["mode"] == "no judge"
    assert report["judges"]["reliability"].startswith("not needed: no judge")
    assert "**NO JUDGE**: no judge: the oracle spec" in (tmp_path / "out" / "report.md").read_text()
    assert 'id="judging"' in (tmp_path / "out" / "index.html").read_text()


def test_a_bundle_that_hides_its_missing_judge_does_not_verify(
    no_judge_env: SpecSet, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["gate", "publish", "--out", "bundle.json"]) == 0
    bundle = json.loads((tmp_path / "bundle.json").read_text())
    del bundle["judging"]
    (tmp_path / "hidden.json").write_text(json.dumps(bundle))
    capsys.readouterr()
    assert main(["verify", "hidden.json"]) != 0
    assert "judging: the bundle says an LLM judge, the oracle spec pre-registers no judge" in (
        capsys.readouterr().out
    )
