"""The cascade's cache keys follow the resolved dependencies: a changed set re-grades, an
unchanged one is reused for nothing."""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest

from migration_evals.core.model import Changeset, Tier
from migration_evals.core.ports import JudgeReply, RegistryFetch, SandboxAction, SandboxResult
from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from migration_evals.oracles.cascade import Budget, Cascade, TrialRecord
from migration_evals.oracles.repos import RepoCache
from migration_evals.oracles.tiers.apply import ApplyOracle
from migration_evals.oracles.tiers.base import TierOracle
from migration_evals.oracles.tiers.compile import CompileOracle
from migration_evals.oracles.tiers.judge import JudgeOracle
from migration_evals.oracles.tiers.tests import TestsOracle
from migration_evals.oracles.workspace import tree_hash
from tests.conftest import RepoFactory, diff_of
from tests.fakes import BuildScript, FakeJudge, FakeSandbox, judge_json

POM = """<project>
  <modelVersion>4.0.0</modelVersion>
  <groupId>x</groupId><artifactId>y</artifactId><version>1</version>
  <properties><maven.compiler.release>{release}</maven.compiler.release></properties>
</project>
"""
GOOD_LINE = "+  <properties><maven.compiler.release>17</maven.compiler.release></properties>"
JUNIT = "org/junit/jupiter/junit-jupiter-api/{v}/junit-jupiter-api-{v}.jar"


@pytest.fixture
def changeset(make_repo: RepoFactory) -> Changeset:
    path, commit = make_repo({"pom.xml": POM.format(release="8"), "src/main/java/x/A.java": ""})
    patch = diff_of(path, {"pom.xml": POM.format(release="17")})
    return Changeset("c1", str(path), commit, patch, "java8-to-17", "gpt-5", date(2021, 5, 1))


def _sandbox(changeset: Changeset, junit: str) -> FakeSandbox:
    """Builds that pass; resolution fetches JUnit ``junit`` through the gate."""
    fetch = RegistryFetch("maven", JUNIT.format(v=junit), 200, "upstream")
    resolved = SandboxResult(0, "Apache Maven 3.8.7\n", image_id="sha256:r", fetches=(fetch,))
    return FakeSandbox(BuildScript(tree_hash(changeset.base_commit, None), resolved=resolved))


def _run(
    specs: SpecSet, tmp_path: Path, store: Store, sandbox: FakeSandbox, changeset: Changeset
) -> TrialRecord:
    judge = FakeJudge(lambda _r: JudgeReply(judge_json("pass", [GOOD_LINE]), "end_turn"))
    oracles: list[TierOracle] = [
        ApplyOracle(),
        CompileOracle(sandbox),
        TestsOracle(sandbox),
        JudgeOracle(judge),
    ]
    cascade = Cascade(
        specs,
        oracles,
        RepoCache(tmp_path / "cache"),
        trials=store.trials,
        artifacts=store.artifacts,
    )
    record = cascade.run_trial("run", changeset, Budget(None))
    store.ledger.append_trial(record.trial, record.cache_keys)
    return record


def _builds(sandbox: FakeSandbox) -> int:
    return sum(request.action is SandboxAction.RUN for request in sandbox.requests)


def test_the_same_resolved_set_reuses_the_compile_envelope_for_nothing(
    specs: SpecSet, tmp_path: Path, changeset: Changeset
) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 'db.sqlite'}")
    first = _run(specs, tmp_path, store, _sandbox(changeset, "5.14.1"), changeset)
    assert first.trial.envelopes[1].details["dependencies"][0]["resolved"] == 1
    again = _sandbox(changeset, "5.14.1")
    second = _run(specs, tmp_path, store, again, replace(changeset, id="c2"))
    assert second.cache_keys[Tier.COMPILE.value] == first.cache_keys[Tier.COMPILE.value]
    compile_envelope = second.trial.envelopes[1]
    assert compile_envelope.cached
    assert compile_envelope.actual_cost_usd == 0.0
    assert _builds(again) == 0  # only resolution ran, to know the key


def test_a_changed_resolved_set_is_a_new_compile_key_and_builds_again(
    specs: SpecSet, tmp_path: Path, changeset: Changeset
) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 'db.sqlite'}")
    first = _run(specs, tmp_path, store, _sandbox(changeset, "5.14.1"), changeset)
    newer = _sandbox(changeset, "5.14.2")
    second = _run(specs, tmp_path, store, newer, replace(changeset, id="c2"))
    assert second.cache_keys[Tier.APPLY.value] == first.cache_keys[Tier.APPLY.value]
    assert second.cache_keys[Tier.COMPILE.value] != first.cache_keys[Tier.COMPILE.value]
    assert not second.trial.envelopes[1].cached
    assert _builds(newer) > 0
