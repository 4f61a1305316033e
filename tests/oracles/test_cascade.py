"""The cascade: order, short-circuit, costs, cache, budget, infrastructure errors, fabrication."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest

from migration_evals.core.cassette import CassetteLibrary
from migration_evals.core.errors import SandboxError
from migration_evals.core.model import Changeset, Envelope, Tier, Verdict
from migration_evals.core.ports import JudgeReply, SandboxAction, SandboxRequest, SandboxResult
from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from migration_evals.oracles.cascade import (
    Budget,
    Carried,
    Cascade,
    TrialDeferredError,
    TrialRecord,
    tier_actual_cost,
)
from migration_evals.oracles.judges import ReplayingJudge
from migration_evals.oracles.judges.retry import BRIEF_WAIT_S
from migration_evals.oracles.repos import RepoCache
from migration_evals.oracles.sandbox import ReplayingSandbox
from migration_evals.oracles.tiers.apply import ApplyOracle
from migration_evals.oracles.tiers.base import TierOutcome
from migration_evals.oracles.tiers.compile import CompileOracle
from migration_evals.oracles.tiers.judge import JudgeOracle
from migration_evals.oracles.tiers.tests import TestsOracle
from migration_evals.oracles.workspace import tree_hash
from tests.conftest import RepoFactory, TrialBases, diff_of
from tests.fakes import (
    FakeJudge,
    FakeSandbox,
    FakeTimer,
    OutageJudge,
    fake_result,
    judge_json,
    surefire_run,
)

POM = """<project>
  <modelVersion>4.0.0</modelVersion>
  <groupId>x</groupId><artifactId>y</artifactId><version>1</version>
  <properties>
    <maven.compiler.source>{source}</maven.compiler.source>
    <maven.compiler.target>{source}</maven.compiler.target>
  </properties>
</project>
"""
JAVA = "package x;\n\npublic class A {\n    int f() { return 1; }\n}\n"
UPGRADED_POM = POM.replace(
    "<maven.compiler.source>{source}</maven.compiler.source>\n"
    "    <maven.compiler.target>{source}</maven.compiler.target>",
    "<maven.compiler.release>17</maven.compiler.release>",
)
GOOD_LINE = "+    <maven.compiler.release>17</maven.compiler.release>"


JAVA_FILES = {"pom.xml": POM.format(source="1.8"), "src/main/java/x/A.java": JAVA}


@pytest.fixture
def java_repo(trial_bases: TrialBases) -> tuple[Path, str]:
    """The Java project, one repository per worker (``TrialBases``): a cascade only reads it."""
    _, path, commit = trial_bases.base(JAVA_FILES)
    return path, commit


@pytest.fixture
def repos(trial_bases: TrialBases) -> RepoCache:
    """The worker's repository cache over ``java_repo`` and the others: a trial only reads
    its base's snapshot."""
    return trial_bases.repos


def _changeset(repo: tuple[Path, str], patch: str, cid: str = "c1") -> Changeset:
    path, commit = repo
    return Changeset(cid, str(path), commit, patch, "java8-to-17", "gpt-5", date(2021, 5, 1))


def _good_patch(repo: tuple[Path, str]) -> str:
    return diff_of(repo[0], {"pom.xml": UPGRADED_POM})


def _passing_judge() -> FakeJudge:
    return FakeJudge(lambda _r: JudgeReply(judge_json("pass", [GOOD_LINE]), "end_turn", 1000, 100))


def _cascade(
    specs: SpecSet,
    repos: RepoCache,
    sandbox: object,
    judge: object,
    *,
    store: Store | None = None,
    strict: bool = False,
) -> Cascade:
    oracles = [
        ApplyOracle(),
        CompileOracle(sandbox),
        TestsOracle(sandbox),
        JudgeOracle(judge, judge),
    ]  # type: ignore[arg-type]
    trials, artifacts = (store.trials, store.artifacts) if store is not None else (None, None)
    return Cascade(
        specs,
        oracles,
        repos,
        trials=trials,
        artifacts=artifacts,
        strict=strict,
    )


def test_a_good_changeset_passes_every_tier_in_order(
    specs: SpecSet, repos: RepoCache, java_repo: tuple[Path, str]
) -> None:
    sandbox, judge = FakeSandbox(), _passing_judge()
    record = _cascade(specs, repos, sandbox, judge).run_trial(
        "run", _changeset(java_repo, _good_patch(java_repo)), Budget(None)
    )
    trial = record.trial
    assert [e.tier for e in trial.envelopes] == list(Tier)
    assert [e.verdict for e in trial.envelopes] == [Verdict.PASS] * 4
    assert trial.verdict is Verdict.PASS
    assert trial.cost_usd == pytest.approx(0.001 + 0.01 + 0.03 + 0.08)
    # The judge's actual cost comes from its token usage: 1000 in, 100 out at $2/$10 per Mtok.
    assert trial.envelopes[3].actual_cost_usd == pytest.approx((1000 * 2 + 100 * 10) / 1e6)
    assert set(record.cache_keys) == {t.value for t in Tier}


def test_a_spec_without_a_judge_ends_the_trial_at_tier_three(
    no_judge_specs: SpecSet, repos: RepoCache, java_repo: tuple[Path, str]
) -> None:
    sandbox, judge = FakeSandbox(), _passing_judge()
    record = _cascade(no_judge_specs, repos, sandbox, judge).run_trial(
        "run", _changeset(java_repo, _good_patch(java_repo)), Budget(None)
    )
    trial = record.trial
    assert [e.tier for e in trial.envelopes] == [Tier.APPLY, Tier.COMPILE, Tier.TESTS]
    assert trial.verdict is Verdict.PASS and judge.requests == []
    assert trial.cost_usd == pytest.approx(0.001 + 0.01 + 0.03)
    assert {e.stamps.oracle for e in trial.envelopes} == {no_judge_specs.oracle_stamp}


def test_a_tier_one_failure_costs_a_tenth_of_a_cent_and_calls_nothing_else(
    specs: SpecSet, repos: RepoCache, java_repo: tuple[Path, str]
) -> None:
    sandbox, judge = FakeSandbox(), _passing_judge()
    broken = diff_of(
        java_repo[0], {"src/main/java/x/A.java": JAVA.replace("return 1;", "return 1")}
    )
    trial = (
        _cascade(specs, repos, sandbox, judge)
        .run_trial("run", _changeset(java_repo, broken), Budget(None))
        .trial
    )
    assert [e.verdict for e in trial.envelopes] == [Verdict.FAIL] + [Verdict.SKIPPED] * 3
    assert trial.cost_usd == pytest.approx(0.001)
    assert sandbox.requests == []
    assert judge.requests == []
    assert trial.envelopes[0].evidence[0].path == "src/main/java/x/A.java"


@pytest.mark.parametrize(
    ("bad", "offset_of"),
    [("\ud800", "lone surrogate"), ("\udcff", "byte 0xff from a patch file")],
)
def test_undecodable_patch_text_fails_tier_one_naming_the_byte_offset(
    specs: SpecSet, repos: RepoCache, java_repo: tuple[Path, str], bad: str, offset_of: str
) -> None:
    good = _good_patch(java_repo)
    at = good.index("<artifactId>")
    patch = good[:at] + bad + good[at:]
    record = _cascade(specs, repos, FakeSandbox(), _passing_judge()).run_trial(
        "run", _changeset(java_repo, patch), Budget(None)
    )
    apply = record.trial.envelopes[0]
    assert apply.verdict is Verdict.FAIL, offset_of
    offset = len(good[:at].encode())
    assert apply.evidence[0].message.endswith(f"an undecodable byte at offset {offset}")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """A fresh ledger (the result cache the cascade looks tiers up in), closed after."""
    store = Store.open(f"sqlite:///{tmp_path / 'db.sqlite'}")
    yield store
    store.close()


@pytest.fixture
def cascade(specs: SpecSet, repos: RepoCache, store: Store) -> Cascade:
    """A cascade whose tiers all pass, keeping its results in ``store``'s ledger."""
    return _cascade(specs, repos, FakeSandbox(), _passing_judge(), store=store)


def _kept(store: Store, cascade: Cascade, run_id: str, changeset: Changeset) -> TrialRecord:
    """``changeset`` graded by ``cascade``, its trial kept in ``store``'s ledger (so its
    envelopes are in the result cache)."""
    record = cascade.run_trial(run_id, changeset, Budget(None))
    store.ledger.append_trial(record.trial, record.cache_keys)
    return record


def test_a_cache_hit_costs_nothing_and_skips_the_adapters(
    specs: SpecSet,
    store: Store,
    java_repo: tuple[Path, str],
    repos: RepoCache,
) -> None:
    sandbox, judge = FakeSandbox(), _passing_judge()
    cascade = _cascade(specs, repos, sandbox, judge, store=store)
    changeset = _changeset(java_repo, _good_patch(java_repo))
    first = _kept(store, cascade, "run1", changeset)
    calls = (len(sandbox.requests), len(judge.requests))
    renamed = replace(changeset, id="same-diff")
    second = cascade.run_trial("run2", renamed, Budget(None)).trial
    assert (len(sandbox.requests), len(judge.requests)) == calls
    assert all(e.cached for e in second.envelopes)
    assert second.cost_usd == 0
    assert second.verdict is Verdict.PASS
    assert second.envelopes[0].changeset_id == "same-diff"
    assert second.envelopes[0].details["cached_from"]["trial_id"] == first.trial.id


class _CountedLookups:
    """The store's cache lookups, counted by key."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.asked: list[str] = []

    def cached_envelope(self, cache_key: str) -> Envelope | None:
        self.asked.append(cache_key)
        return self.store.trials.cached_envelope(cache_key)


def test_once_a_tier_has_to_run_the_later_tiers_are_not_looked_up(
    store: Store, java_repo: tuple[Path, str], cascade: Cascade
) -> None:
    lookups = _CountedLookups(store)
    cascade.trials = lookups  # type: ignore[assignment]
    changeset = _changeset(java_repo, _good_patch(java_repo))
    first = _kept(store, cascade, "r1", changeset)
    assert lookups.asked == [first.cache_keys["apply"]]  # a miss: the rest must run
    lookups.asked.clear()
    second = cascade.run_trial("r2", changeset, Budget(None))
    assert all(e.cached for e in second.trial.envelopes)
    assert lookups.asked == [second.cache_keys[t.value] for t in cascade.tiers]
    # Only the judge's key moves with strict judging: tiers 1-3 are reused, the judge
    # is looked up, missed and asked.
    cascade.strict = True
    lookups.asked.clear()
    third = cascade.run_trial("r3", changeset, Budget(None)).trial
    assert [e.cached for e in third.envelopes] == [True, True, True, False]
    assert len(lookups.asked) == 4


def test_a_changed_patch_is_never_served_from_the_cache(
    store: Store, java_repo: tuple[Path, str], cascade: Cascade
) -> None:
    _kept(store, cascade, "r1", _changeset(java_repo, _good_patch(java_repo)))
    other = diff_of(java_repo[0], {"pom.xml": UPGRADED_POM + "<!-- x -->\n"})
    second = cascade.run_trial("r2", _changeset(java_repo, other), Budget(None)).trial
    assert not any(e.cached for e in second.envelopes)


def test_an_infrastructure_fault_is_an_error_not_a_failure_and_is_not_cached(
    specs: SpecSet,
    store: Store,
    java_repo: tuple[Path, str],
    repos: RepoCache,
) -> None:
    def engine_down(_request: SandboxRequest) -> SandboxResult:
        raise SandboxError("Docker engine not reachable")

    cascade = _cascade(specs, repos, FakeSandbox(engine_down), _passing_judge(), store=store)
    record = cascade.run_trial("r", _changeset(java_repo, _good_patch(java_repo)), Budget(None))
    compile_envelope = record.trial.envelopes[1]
    assert compile_envelope.verdict is Verdict.ERROR
    assert "Docker engine not reachable" in compile_envelope.reason
    assert record.trial.verdict is Verdict.ERROR
    store.ledger.append_trial(record.trial, record.cache_keys)
    assert store.trials.cached_envelope(record.cache_keys["compile"]) is None


def test_a_missing_base_commit_is_an_error(
    specs: SpecSet, repos: RepoCache, java_repo: tuple[Path, str]
) -> None:
    changeset = _changeset((java_repo[0], "e" * 40), _good_patch(java_repo))
    trial = (
        _cascade(specs, repos, FakeSandbox(), _passing_judge())
        .run_trial("r", changeset, Budget(None))
        .trial
    )
    assert trial.envelopes[0].verdict is Verdict.ERROR
    assert "does not exist" in trial.envelopes[0].reason


def test_the_budget_stops_before_spending_past_it(
    specs: SpecSet, repos: RepoCache, java_repo: tuple[Path, str]
) -> None:
    sandbox = FakeSandbox()
    budget = Budget(0.005)
    trial = (
        _cascade(specs, repos, sandbox, _passing_judge())
        .run_trial("r", _changeset(java_repo, _good_patch(java_repo)), budget)
        .trial
    )
    assert [e.verdict for e in trial.envelopes[:2]] == [Verdict.PASS, Verdict.INCONCLUSIVE]
    assert sandbox.requests == []
    assert budget.spent_usd == pytest.approx(0.001)
    assert budget.exhausted


def test_cassette_misses_fabricate_every_later_tier(
    specs: SpecSet,
    tmp_path: Path,
    java_repo: tuple[Path, str],
    repos: RepoCache,
) -> None:
    library = CassetteLibrary(tmp_path / "cassettes-typo")
    cascade = _cascade(specs, repos, ReplayingSandbox(library), ReplayingJudge(library))
    trial = cascade.run_trial(
        "r", _changeset(java_repo, _good_patch(java_repo)), Budget(None)
    ).trial
    apply, *later, judge = trial.envelopes
    assert not apply.fabricated
    assert all(e.fabricated for e in later)
    assert {m.port for e in later for m in e.fabricated} == {"sandbox"}
    # The fabricated default of a test run is an empty success: no test ran at the base,
    # so there is nothing to compare and the cascade stops before the judge.
    assert later[-1].verdict is Verdict.INCONCLUSIVE
    assert later[-1].reason.startswith("no tests to compare")
    assert judge.verdict is Verdict.SKIPPED


def test_strict_mode_asks_both_judges_and_disagreement_fails(
    specs: SpecSet, repos: RepoCache, java_repo: tuple[Path, str]
) -> None:
    def by_model(request: object) -> JudgeReply:
        verdict = "pass" if request.model == "claude-sonnet-5-5" else "fail"
        return JudgeReply(judge_json(verdict, [GOOD_LINE]), "end_turn")

    judge = FakeJudge(by_model)
    cascade = _cascade(specs, repos, FakeSandbox(), judge, strict=True)
    trial = cascade.run_trial(
        "r", _changeset(java_repo, _good_patch(java_repo)), Budget(None)
    ).trial
    assert [r.model for r in judge.requests] == ["claude-sonnet-5-5", "gpt-5"]
    assert trial.envelopes[3].verdict is Verdict.FAIL
    assert trial.envelopes[3].reason == "judges disagree"


def _suite(*failing: str) -> SandboxResult:
    return surefire_run({name: name not in failing for name in ("a", "b")}, classname="x.T")


def _scripted(baseline_hash: str, patched_runs: list[SandboxResult]) -> FakeSandbox:
    """Baseline always green; the patched suite's n-th attempt returns patched_runs[n]."""

    def respond(request: SandboxRequest) -> SandboxResult:
        if "test" not in request.command:
            return fake_result(request)
        if request.tree_hash == baseline_hash:
            return _suite()
        return patched_runs[min(request.attempt, len(patched_runs) - 1)]

    return FakeSandbox(respond)


def _tests_envelope(
    specs: SpecSet, repos: RepoCache, repo: tuple[Path, str], sandbox: FakeSandbox
) -> Envelope:
    trial = (
        _cascade(specs, repos, sandbox, _passing_judge())
        .run_trial("r", _changeset(repo, _good_patch(repo)), Budget(None))
        .trial
    )
    return trial.envelopes[2]


def test_a_regression_that_persists_on_reruns_fails(
    specs: SpecSet, repos: RepoCache, java_repo: tuple[Path, str]
) -> None:
    sandbox = _scripted(tree_hash(java_repo[1], None), [_suite("b")])
    envelope = _tests_envelope(specs, repos, java_repo, sandbox)
    assert envelope.verdict is Verdict.FAIL
    assert envelope.details["reruns"] == specs.oracle.tier(Tier.TESTS).reruns
    base = tree_hash(java_repo[1], None)
    runs = [r for r in sandbox.requests if r.action is SandboxAction.RUN]
    attempts = [r.attempt for r in runs if "test" in r.command and r.tree_hash != base]
    assert attempts == [0, 1, 2]


def test_a_test_that_flips_on_a_rerun_is_inconclusive(
    specs: SpecSet, repos: RepoCache, java_repo: tuple[Path, str]
) -> None:
    sandbox = _scripted(tree_hash(java_repo[1], None), [_suite("b"), _suite()])
    envelope = _tests_envelope(specs, repos, java_repo, sandbox)
    assert envelope.verdict is Verdict.INCONCLUSIVE
    assert envelope.reason.startswith("flaky")


JAVA8_CLASS_HEAD = "cafebabe00000034"


def test_the_image_id_is_in_every_sandbox_envelope_and_in_the_cache_key(
    specs: SpecSet,
    store: Store,
    java_repo: tuple[Path, str],
    repos: RepoCache,
) -> None:
    changeset = _changeset(java_repo, _good_patch(java_repo))
    image = specs.recipe("java8-to-17").sandbox.image
    base_image = "migration-evals/java8:2"  # the base declares source 1.8
    ids = {image: "sha256:one", base_image: "sha256:eight"}
    first_sandbox = FakeSandbox(images=ids)
    first = _cascade(specs, repos, first_sandbox, _passing_judge(), store=store).run_trial(
        "r1", changeset, Budget(None)
    )
    store.ledger.append_trial(first.trial, first.cache_keys)
    compile_envelope = first.trial.envelopes[1]
    assert compile_envelope.details["images"] == ids
    assert compile_envelope.details["image_id"] == "sha256:one"
    assert first.trial.envelopes[2].details["patched"]["image_id"] == "sha256:one"
    assert first.trial.envelopes[2].details["baseline"]["image_id"] == "sha256:eight"
    # Rebuilding either side's image re-grades tiers 2-4.
    for rebuilt_ids in ({**ids, image: "sha256:two"}, {**ids, base_image: "sha256:nine"}):
        rebuilt = FakeSandbox(images=rebuilt_ids)
        second = _cascade(specs, repos, rebuilt, _passing_judge(), store=store).run_trial(
            "r2", changeset, Budget(None)
        )
        cached = [e.cached for e in second.trial.envelopes]
        assert cached == [True, False, False, False]  # apply does not depend on the image
        assert rebuilt.requests


def test_class_files_of_the_wrong_version_fail_the_compile_tier(
    specs: SpecSet, repos: RepoCache, java_repo: tuple[Path, str]
) -> None:
    def old_classes(request: SandboxRequest) -> SandboxResult:
        heads = {"target/classes/x/A.class": JAVA8_CLASS_HEAD} if request.inspect else {}
        return SandboxResult(0, image_id=request.image_id(), file_heads=heads)

    trial = (
        _cascade(specs, repos, FakeSandbox(old_classes), _passing_judge())
        .run_trial("r", _changeset(java_repo, _good_patch(java_repo)), Budget(None))
        .trial
    )
    compile_envelope = trial.envelopes[1]
    assert compile_envelope.verdict is Verdict.FAIL
    assert compile_envelope.reason.startswith("1 of 1 class file(s) are not major version 61")
    assert compile_envelope.evidence[0].path == "target/classes/x/A.class"


def test_one_baseline_run_serves_every_patch_on_the_same_commit(
    specs: SpecSet, repos: RepoCache, java_repo: tuple[Path, str]
) -> None:
    sandbox = FakeSandbox()
    cascade = _cascade(specs, repos, sandbox, _passing_judge())
    other = diff_of(java_repo[0], {"pom.xml": UPGRADED_POM + "<!-- x -->\n"})
    for cid, patch in (("a", _good_patch(java_repo)), ("b", other)):
        cascade.run_trial("r", _changeset(java_repo, patch, cid), Budget(None))
    base = tree_hash(java_repo[1], None)
    at_base = [r for r in sandbox.requests if r.tree_hash == base]
    # One resolution, one base build for tier 2 and one base suite for tier 3, whatever
    # the number of patches.
    assert [r.action for r in at_base].count(SandboxAction.RESOLVE) == 1
    runs = [r.command[-1] for r in at_base if r.action is SandboxAction.RUN]
    assert runs == ["compile", "test"]


def test_edited_tests_fail_before_the_suite_runs(
    specs: SpecSet, repos: RepoCache, make_repo: RepoFactory
) -> None:
    test_file = "src/test/java/x/ATest.java"
    repo = make_repo(
        {
            "pom.xml": POM.format(source="1.8"),
            "src/main/java/x/A.java": JAVA,
            test_file: "package x;\n\npublic class ATest {\n}\n",
        }
    )
    patch = diff_of(repo[0], {"pom.xml": UPGRADED_POM, test_file: "package x;\n\nclass ATest {}\n"})
    sandbox = FakeSandbox()
    trial = (
        _cascade(specs, repos, sandbox, _passing_judge())
        .run_trial("r", _changeset(repo, patch), Budget(None))
        .trial
    )
    tests_envelope = trial.envelopes[2]
    assert tests_envelope.verdict is Verdict.FAIL
    assert tests_envelope.evidence[0].path == test_file
    runs = [r for r in sandbox.requests if r.action is SandboxAction.RUN]
    assert [r.command[-1] for r in runs] == ["compile", "compile"]  # base and patched


DOCKERFILE = "FROM debian:11-slim\nCOPY smoke-test.sh /\n"
REWRITES = {"rewrites": {"debian:11-slim": "debian:12-slim"}}


def _docker_changeset(make_repo: RepoFactory) -> Changeset:
    path, commit = make_repo({"Dockerfile": DOCKERFILE, "smoke-test.sh": "true\n"})
    patch = diff_of(path, {"Dockerfile": DOCKERFILE.replace("11-slim", "12-slim")})
    return Changeset(
        "d", str(path), commit, patch, "base-image-bump", "gpt-5", date(2021, 5, 1), REWRITES
    )


def _builds(fail_base: bool = False) -> FakeSandbox:
    def respond(request: SandboxRequest) -> SandboxResult:
        if request.action is SandboxAction.BUILD:
            base = "debian:11-slim" in dict(request.pinned)
            if fail_base and base:
                return SandboxResult(1, "step 2/2 failed")
            return SandboxResult(0, image_id=f"sha256:built-{'base' if base else 'patched'}")
        return SandboxResult(0, image_id=request.image_id())

    return FakeSandbox(respond)


def test_a_dockerfile_recipe_builds_pinned_to_its_base_images_and_tests_in_them(
    specs: SpecSet, repos: RepoCache, make_repo: RepoFactory
) -> None:
    sandbox = _builds()
    trial = (
        _cascade(specs, repos, sandbox, _passing_judge())
        .run_trial("r", _docker_changeset(make_repo), Budget(None))
        .trial
    )
    assert [e.verdict for e in trial.envelopes[:3]] == [Verdict.PASS] * 3
    builds = [r for r in sandbox.requests if r.action is SandboxAction.BUILD]
    assert {dict(r.pinned).popitem()[1] for r in builds} == {
        "sha256:fake-debian:11-slim",
        "sha256:fake-debian:12-slim",
    }
    runs = [r.image for r in sandbox.requests if r.action is SandboxAction.RUN]
    assert sorted(runs) == ["sha256:built-base", "sha256:built-patched"]


def test_a_base_image_that_does_not_build_is_an_infrastructure_error(
    specs: SpecSet, repos: RepoCache, make_repo: RepoFactory
) -> None:
    sandbox = _builds(fail_base=True)
    trial = (
        _cascade(specs, repos, sandbox, _passing_judge())
        .run_trial("r", _docker_changeset(make_repo), Budget(None))
        .trial
    )
    # Since issue 14 the compile tier is anchored on the base commit itself: the base
    # build comes first, and when it fails the patched one is not even tried.
    assert trial.envelopes[1].verdict is Verdict.ERROR
    assert "the base commit's Dockerfile does not build (exit 1) here" in trial.envelopes[1].reason
    assert len(sandbox.requests) == 1


def test_an_errored_judge_costs_no_sandbox_time_but_an_errored_build_does() -> None:
    # A judge that never answered billed no tokens; its wait held no sandbox either.
    errored = TierOutcome(Verdict.ERROR, "infrastructure error: judge unreachable")
    assert tier_actual_cost(Tier.JUDGE, errored, 180.0, 0.0001) == 0.0
    assert tier_actual_cost(Tier.COMPILE, errored, 180.0, 0.0001) == pytest.approx(0.018)
    answered = TierOutcome(Verdict.PASS, "ok", actual_cost_usd=0.02)
    assert tier_actual_cost(Tier.JUDGE, answered, 180.0, 0.0001) == 0.02


# -- an unavailable judge API inside a job: put back, never waited for ----------------------

_UP_TO_TESTS = 0.001 + 0.01 + 0.03  # list costs of tiers 1-3
_ALL_TIERS = _UP_TO_TESTS + 0.08


def _outage(down: int, retry_after_s: float | None = 30.0) -> tuple[OutageJudge, FakeTimer]:
    timer = FakeTimer()
    return OutageJudge(_passing_judge(), timer, down=down, retry_after_s=retry_after_s), timer


def _deferred(
    cascade: Cascade, run_id: str, changeset: Changeset, budget: Budget
) -> TrialDeferredError:
    with pytest.raises(TrialDeferredError) as raised:
        cascade.run_trial(run_id, changeset, budget, defer=True)
    return raised.value


def test_in_a_job_an_unavailable_judge_puts_the_trial_back_with_what_it_made(
    specs: SpecSet,
    store: Store,
    java_repo: tuple[Path, str],
    repos: RepoCache,
) -> None:
    judge, timer = _outage(down=5, retry_after_s=30.0)
    cascade = _cascade(specs, repos, FakeSandbox(), judge, store=store)
    budget = Budget(1.0)
    deferred = _deferred(cascade, "r1", _changeset(java_repo, _good_patch(java_repo)), budget)
    assert deferred.retry_after_s == 30.0  # the API's Retry-After, for the queue to honour
    assert "rate limited" in str(deferred)
    # Asked once: a 30 s wait is the queue's to keep, not this thread's.
    assert judge.calls == 1 and timer.sleeps == []
    carried = deferred.carried
    assert carried.run_id == "r1"
    assert list(carried.tiers) == [Tier.APPLY, Tier.COMPILE, Tier.TESTS]
    assert all(e.verdict is Verdict.PASS for _, e in carried.tiers.values())
    # The judge's reservation is given back; what tiers 1-3 spent stays spent.
    assert budget.spent_usd == pytest.approx(_UP_TO_TESTS)
    # The cache holds only what the ledger holds: nothing of a trial that was put back.
    assert all(store.trials.cached_envelope(key) is None for key, _ in carried.tiers.values())
    assert Carried.of(carried.to_dict()) == carried  # it travels in the job's payload


def test_the_next_attempt_reuses_tiers_one_to_three_and_counts_them_once(
    specs: SpecSet, repos: RepoCache, java_repo: tuple[Path, str]
) -> None:
    judge, timer = _outage(down=1)
    sandbox = FakeSandbox()
    cascade = _cascade(specs, repos, sandbox, judge)
    changeset = _changeset(java_repo, _good_patch(java_repo))
    budget = Budget(1.0)
    carried = _deferred(cascade, "r1", changeset, budget).carried
    runs = len(sandbox.requests)
    record = cascade.run_trial("r1", changeset, budget, defer=True, carried=carried)
    trial = record.trial
    assert trial.verdict is Verdict.PASS and judge.answered == 1
    assert len(sandbox.requests) == runs  # no build and no test ran again
    assert [e.details.get("carried_from", {}).get("run_id") for e in trial.envelopes] == [
        "r1",
        "r1",
        "r1",
        None,
    ]
    # Each tier paid for once, in the envelopes and in the budget alike.
    assert trial.cost_usd == pytest.approx(_ALL_TIERS)
    assert budget.spent_usd == pytest.approx(_ALL_TIERS)
    fresh = _cascade(specs, repos, FakeSandbox(), _passing_judge()).run_trial(
        "r1", changeset, Budget(None)
    )
    assert record.cache_keys == fresh.cache_keys  # stored under the keys a fresh trial has
    assert timer.sleeps == []


def test_an_attempt_in_another_run_charges_the_carried_tiers_to_its_own_budget(
    specs: SpecSet, repos: RepoCache, java_repo: tuple[Path, str]
) -> None:
    judge, _ = _outage(down=1)
    cascade = _cascade(specs, repos, FakeSandbox(), judge)
    changeset = _changeset(java_repo, _good_patch(java_repo))
    carried = _deferred(cascade, "r1", changeset, Budget(None)).carried
    budget = Budget(1.0)  # a grade job's next attempt is a run of its own
    trial = cascade.run_trial("r2", changeset, budget, defer=True, carried=carried).trial
    assert trial.verdict is Verdict.PASS
    assert budget.spent_usd == pytest.approx(_ALL_TIERS)
    assert trial.envelopes[0].trial_id == trial.id
    assert trial.envelopes[0].details["carried_from"]["trial_id"] != trial.id


def test_envelopes_made_for_another_patch_are_not_reused(
    specs: SpecSet, repos: RepoCache, java_repo: tuple[Path, str]
) -> None:
    judge, _ = _outage(down=1)
    sandbox = FakeSandbox()
    cascade = _cascade(specs, repos, sandbox, judge)
    carried = _deferred(
        cascade, "r1", _changeset(java_repo, _good_patch(java_repo)), Budget(None)
    ).carried
    runs = len(sandbox.requests)
    other = diff_of(java_repo[0], {"pom.xml": UPGRADED_POM + "<!-- x -->\n"})
    trial = cascade.run_trial(
        "r1", _changeset(java_repo, other), Budget(None), carried=carried
    ).trial
    assert len(sandbox.requests) > runs
    assert not any("carried_from" in e.details for e in trial.envelopes)


def test_a_short_outage_is_retried_once_briefly_within_the_attempt(
    specs: SpecSet, repos: RepoCache, java_repo: tuple[Path, str]
) -> None:
    judge, timer = _outage(down=1, retry_after_s=None)
    cascade = _cascade(specs, repos, FakeSandbox(), judge)
    changeset = _changeset(java_repo, _good_patch(java_repo))
    trial = cascade.run_trial("r", changeset, Budget(None), defer=True).trial
    assert trial.verdict is Verdict.PASS
    assert judge.calls == 2 and timer.sleeps == [1.0]
    assert max(timer.sleeps) <= BRIEF_WAIT_S


def test_outside_a_job_or_on_its_last_attempt_the_judge_retries_then_records_error(
    specs: SpecSet, repos: RepoCache, java_repo: tuple[Path, str]
) -> None:
    judge, timer = _outage(down=99, retry_after_s=None)
    cascade = _cascade(specs, repos, FakeSandbox(), judge)
    changeset = _changeset(java_repo, _good_patch(java_repo))
    trial = cascade.run_trial("r", changeset, Budget(None)).trial  # defer=False
    judged = trial.envelopes[3]
    assert judged.verdict is Verdict.ERROR and trial.verdict is Verdict.ERROR
    assert judged.reason.startswith("infrastructure error: the judge API answered 429")
    assert "gave up after 5 attempt(s): 4 retries spent" in judged.reason
    assert timer.sleeps == [1.0, 2.0, 4.0, 8.0]  # today's bounded retries


def _named_artifacts(record: TrialRecord) -> set[str]:
    """The digests of the artifacts the trial's envelopes name."""
    found = set()
    for envelope in record.trial.envelopes:
        details = envelope.details
        found |= {log["artifact"]["sha256"] for log in details.get("logs", ()) if "artifact" in log}
        if "patch" in details:
            found.add(details["patch"]["sha256"])
    return found


@pytest.fixture
def stored_cascade(
    specs: SpecSet,
    tmp_path: Path,
    java_repo: tuple[Path, str],
    repos: RepoCache,
) -> Iterator[tuple[Store, Cascade, Changeset]]:
    """A cascade writing to a ledger's store, and a good Java changeset for it."""
    store = Store.open(f"sqlite:///{tmp_path / 'ledger.db'}")
    try:
        cascade = _cascade(specs, repos, FakeSandbox(), _passing_judge(), store=store)
        yield store, cascade, _changeset(java_repo, _good_patch(java_repo))
    finally:
        store.close()


def test_held_artifacts_are_handed_back_to_be_kept_not_written(
    stored_cascade: tuple[Store, Cascade, Changeset],
) -> None:
    store, cascade, changeset = stored_cascade
    held = cascade.run_trial("run", changeset, Budget(None), hold_artifacts=True)
    named = _named_artifacts(held)
    assert named and {ref.sha256 for ref, _ in held.artifacts} == named
    assert all(store.artifacts.get(digest) is None for digest in named)
    store.artifacts.keep(held.artifacts)
    assert all(store.artifacts.get(digest) is not None for digest in named)
    # Graded again without holding, the same artifacts are written as it goes.
    written = cascade.run_trial("again", changeset, Budget(None))
    assert written.artifacts == () and _named_artifacts(written) == named


def test_a_trial_that_can_be_put_back_writes_its_artifacts_as_it_goes(
    stored_cascade: tuple[Store, Cascade, Changeset],
) -> None:
    store, cascade, changeset = stored_cascade
    record = cascade.run_trial("run", changeset, Budget(None), defer=True, hold_artifacts=True)
    assert record.artifacts == ()  # a put-back trial's envelopes travel without them
    assert all(store.artifacts.get(d) is not None for d in _named_artifacts(record))
