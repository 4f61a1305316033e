"""A Celery run with ``--sandbox live`` is graded live on the worker, whatever the worker's
own environment says: the plan travels with every trial job. On a real PostgreSQL, Redis
and Docker engine."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from migration_evals.core.changesets import read_changesets
from migration_evals.core.model import Tier
from migration_evals.core.specs import SpecSet
from tests.bot.executor.processes import Cluster, Workload
from tests.conftest import ROOT

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.docker]

EXAMPLES = ROOT / "examples" / "changesets"


def _workload(folder: Path, specs: SpecSet) -> Workload:
    """The go-ioutil/good example (it reaches the judge), with its paths made absolute."""
    [located] = [
        c
        for c in read_changesets(EXAMPLES / "go.jsonl", specs)
        if c.changeset.id == "go-ioutil/good"
    ]
    line = json.loads((EXAMPLES / "go.jsonl").read_text().splitlines()[located.line - 1])
    line["repo"] = str((EXAMPLES / line["repo"]).resolve())
    line["patch_file"] = str((EXAMPLES / line["patch_file"]).resolve())
    jsonl = folder / "changesets.jsonl"
    jsonl.write_text(json.dumps(line) + "\n")
    return Workload([located.changeset], jsonl, ROOT / "cassettes")


@pytest.mark.usefixtures("docker_client")
def test_a_celery_run_with_a_live_sandbox_is_graded_live_on_the_worker(
    tmp_path: Path, specs: SpecSet, postgres_url: str, redis_url: str
) -> None:
    cluster = Cluster(tmp_path, _workload(tmp_path, specs), postgres_url, redis_url)
    try:
        # The worker's own settings say replay; the run's plan says live.
        cluster.start_worker("w", MIGRATION_EVALS_MODE="replay")
        document = cluster.finish_run(cluster.start_run("--sandbox", "live"), timeout_s=900)
    finally:
        cluster.stop_all()
    [trial] = document["trials"]
    assert trial["verdict"] == "pass", cluster.logs()
    with cluster.store() as (store, _queue):
        [run] = store.runs.all()
        adapters = {e.envelope.tier: e.envelope.adapter for e in store.ledger.entries()}
    assert json.loads(run["options"])["plan"]["modes"]["sandbox"] == "live"
    # The envelopes name the adapter that graded them: the Docker engine, not cassettes.
    for tier in (Tier.COMPILE, Tier.TESTS):
        assert "sandbox:docker" in adapters[tier], adapters
    assert "sandbox:replay" not in " ".join(adapters.values())
