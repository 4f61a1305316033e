"""Every bundled example graded live on a real engine matches its recorded cassettes."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from migration_evals.bot.commands.demo import EXAMPLES, load_examples
from migration_evals.bot.wiring import build_cascade
from migration_evals.core.model import Trial
from migration_evals.core.settings import CassetteMode, Settings
from migration_evals.core.store import Store
from migration_evals.oracles.cascade import Budget
from migration_evals.oracles.runner import Runner
from tests.conftest import ROOT, SPECS_DIR

pytestmark = pytest.mark.docker


def _grade(tmp_path: Path, mode: CassetteMode, docker_host: str | None) -> dict[str, Trial]:
    settings = Settings(
        specs_dir=SPECS_DIR,
        cassette_dir=ROOT / "cassettes",
        cache_dir=tmp_path / f"cache-{mode.value}",
        db_url=f"sqlite:///{tmp_path / f'{mode.value}.db'}",
        sandbox_mode=mode,
        jobs=2,
        docker_host=docker_host,
    )
    store = Store.open(settings.db_url)
    try:
        runner = Runner(
            build_cascade(settings, store=store).cascade,
            store.runs,
            store.ledger,
            jobs=settings.jobs,
        )
        changesets = [located.changeset for located in load_examples(EXAMPLES)]
        outcome = runner.run(changesets, budget=Budget(None))
    finally:
        store.close()
    return {trial.changeset.id: trial for trial in outcome.trials}


def _graded(trial: Trial) -> list[tuple[Any, ...]]:
    """What a trial concluded, without what differs between runs (times, costs, ids)."""
    return [
        (e.tier.value, e.verdict.value, e.reason, tuple(str(x) for x in e.evidence))
        for e in trial.envelopes
    ]


@pytest.mark.usefixtures("docker_client")
def test_every_example_graded_live_matches_its_recorded_cassette(tmp_path: Path) -> None:
    replayed = _grade(tmp_path, CassetteMode.REPLAY, None)
    live = _grade(tmp_path, CassetteMode.LIVE, os.environ.get("DOCKER_HOST"))
    assert not any(e.fabricated for t in replayed.values() for e in t.envelopes)
    assert set(live) == set(replayed)
    mismatches = {
        cid: (_graded(live[cid]), _graded(replayed[cid]))
        for cid in replayed
        if _graded(live[cid]) != _graded(replayed[cid])
    }
    assert mismatches == {}
    # The live sandbox envelopes name the images the runs used.
    compiled = [t.envelopes[1] for t in live.values() if t.envelopes[1].verdict.value == "pass"]
    assert compiled and all(e.details["image_id"].startswith("sha256:") for e in compiled)
