"""Tier 3 over projects: each project's suite at base and patched, graded together."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from migration_evals.core.model import Verdict
from migration_evals.core.ports import SandboxRequest, SandboxResult
from migration_evals.oracles.baselines import BaselineCache
from migration_evals.oracles.builds import Builds
from migration_evals.oracles.ecosystems.maven.junit_record import NO_LISTENER
from migration_evals.oracles.tiers.base import TierOutcome, TrialContext
from migration_evals.oracles.tiers.tests import TestsOracle
from migration_evals.oracles.workspace import tree_hash
from tests.conftest import TrialFactory
from tests.fakes import BuildScript, FakeSandbox, fake_result, surefire_run

POM = """<project>
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.example</groupId><artifactId>{name}</artifactId><version>1</version>
  <properties><maven.compiler.release>{release}</maven.compiler.release></properties>
</project>
"""
JAVA = "package x;\n\npublic class A {\n}\n"
TWO_REACTORS = {
    "a/pom.xml": POM.format(name="a", release="8"),
    "a/src/main/java/x/A.java": JAVA,
    "b/pom.xml": POM.format(name="b", release="8"),
    "b/src/main/java/x/A.java": JAVA,
}
UPGRADE_BOTH = {
    "a/pom.xml": POM.format(name="a", release="17"),
    "b/pom.xml": POM.format(name="b", release="17"),
}
# Suites: project -> tree ("base" or "patched") -> test name -> passes.
Suites = Mapping[str, Mapping[str, Mapping[str, bool]]]


# Rewrites one project's run: (project, patched?, the honest result) -> result.
Tamper = Callable[[str, bool, SandboxResult], SandboxResult]


def _evaluate(context: TrialContext, suites: Suites, tamper: Tamper | None = None) -> TierOutcome:
    """Tier 3 with each project's suite answering from ``suites`` (exit 1 when a test
    fails, as Surefire does); builds are clean."""

    def run(request: SandboxRequest, patched: bool) -> SandboxResult:
        if "test" not in request.command:
            return fake_result(request)
        tests = suites[request.workdir]["patched" if patched else "base"]
        result = surefire_run(tests, image_id="sha256:fake")
        return tamper(request.workdir, patched, result) if tamper else result

    sandbox = FakeSandbox(BuildScript(tree_hash(context.changeset.base_commit, None), run=run))
    builds = Builds(sandbox, BaselineCache(), registry="gate")
    return TestsOracle(sandbox, builds=builds).evaluate(context)


def test_with_several_projects_test_names_carry_their_project(make_trial: TrialFactory) -> None:
    # Both projects have a test of the same name: only b's regresses.
    same = {"base": {"t1": True, "t2": True}, "patched": {"t1": True, "t2": True}}
    broken = {"base": {"t1": True, "t2": True}, "patched": {"t1": True, "t2": False}}
    outcome = _evaluate(make_trial(TWO_REACTORS, UPGRADE_BOTH), {"a": same, "b": broken})
    assert outcome.verdict is Verdict.FAIL
    assert [e.message for e in outcome.evidence] == [
        "no longer passes: b: (exit status)",
        "no longer passes: b: x.ATest#t2",
    ]
    assert (
        outcome.reason == "1 test(s) that passed at the base commit no longer pass: b: x.ATest#t2"
    )


def test_with_several_projects_the_same_names_do_not_hide_each_other(
    make_trial: TrialFactory,
) -> None:
    # Unprefixed, b's passing t2 would overwrite a's failing one in the merged report.
    broken = {"base": {"t2": True}, "patched": {"t2": False}}
    same = {"base": {"t2": True}, "patched": {"t2": True}}
    outcome = _evaluate(make_trial(TWO_REACTORS, UPGRADE_BOTH), {"a": broken, "b": same})
    assert outcome.verdict is Verdict.FAIL
    assert "no longer passes: a: x.ATest#t2" in [e.message for e in outcome.evidence]


def test_one_project_keeps_the_plain_test_names(make_trial: TrialFactory) -> None:
    files = {"pom.xml": POM.format(name="app", release="8"), "src/main/java/x/A.java": JAVA}
    broken = {"base": {"t1": True}, "patched": {"t1": False}}
    outcome = _evaluate(
        make_trial(files, {"pom.xml": POM.format(name="app", release="17")}), {"": broken}
    )
    assert "no longer passes: x.ATest#t1" in [e.message for e in outcome.evidence]


REMOVE_B = {
    "a/pom.xml": UPGRADE_BOTH["a/pom.xml"],
    "b/pom.xml": None,
    "b/src/main/java/x/A.java": None,
}


def test_a_removed_projects_tests_still_count(make_trial: TrialFactory) -> None:
    suites: Suites = {
        "a": {"base": {"t1": True}, "patched": {"t1": True}},
        "b": {"base": {"t1": True, "t2": True}},
    }
    outcome = _evaluate(make_trial(TWO_REACTORS, REMOVE_B), suites)
    assert outcome.verdict is Verdict.FAIL
    assert outcome.reason == "number of tests dropped from 3 to 1"


def test_a_removed_project_without_tests_does_not_fail_on_its_exit_status(
    make_trial: TrialFactory,
) -> None:
    suites: Suites = {"a": {"base": {"t1": True}, "patched": {"t1": True}}, "b": {"base": {}}}
    outcome = _evaluate(make_trial(TWO_REACTORS, REMOVE_B), suites)
    assert outcome.verdict is Verdict.PASS, outcome.reason


def test_an_edited_test_in_a_module_fails_before_any_run(make_trial: TrialFactory) -> None:
    test_file = "a/src/test/java/x/ATest.java"
    files = {**TWO_REACTORS, test_file: "package x;\n\npublic class ATest {\n}\n"}
    changes = {**UPGRADE_BOTH, test_file: "package x;\n\nclass ATest {}\n"}
    suites = {p: {"base": {"t1": True}, "patched": {"t1": True}} for p in ("a", "b")}
    outcome = _evaluate(make_trial(files, changes), suites)
    assert outcome.verdict is Verdict.FAIL
    assert outcome.evidence[0].path == test_file


GREEN = {"base": {"t1": True, "t2": True}, "patched": {"t1": True, "t2": True}}


def test_a_modules_failure_the_build_ignored_fails_as_a_disagreement(
    make_trial: TrialFactory,
) -> None:
    """maven.test.failure.ignore in b: its test fails in the report and in Maven's
    summary, and Maven exits 0."""
    broken = {"base": {"t1": True, "t2": True}, "patched": {"t1": True, "t2": False}}

    def ignore(project: str, patched: bool, result: SandboxResult) -> SandboxResult:
        return replace(result, exit_code=0) if project == "b" and patched else result

    outcome = _evaluate(make_trial(TWO_REACTORS, UPGRADE_BOTH), {"a": GREEN, "b": broken}, ignore)
    assert outcome.verdict is Verdict.FAIL
    assert outcome.reason == (
        "reports disagree with the build's own summary:"
        " b: the build exited 0 although it logged 1 test failure(s)"
    )


def test_a_modules_reports_left_uncollected_fail_as_a_disagreement(
    make_trial: TrialFactory,
) -> None:
    def lose(project: str, patched: bool, result: SandboxResult) -> SandboxResult:
        return replace(result, artifacts={}) if project == "a" and patched else result

    outcome = _evaluate(make_trial(TWO_REACTORS, UPGRADE_BOTH), {"a": GREEN, "b": GREEN}, lose)
    assert outcome.verdict is Verdict.FAIL
    assert outcome.reason.startswith(
        "reports disagree with the build's own summary: a: reports: 0 run, 0 failed, 0 skipped;"
        " the build printed: 2 run"
    )


def test_reports_disagreeing_at_the_base_are_an_error(make_trial: TrialFactory) -> None:
    def lose(project: str, patched: bool, result: SandboxResult) -> SandboxResult:
        return result if patched else replace(result, output="")

    outcome = _evaluate(make_trial(TWO_REACTORS, UPGRADE_BOTH), {"a": GREEN, "b": GREEN}, lose)
    assert outcome.verdict is Verdict.ERROR
    assert outcome.reason.startswith("baseline reports disagree with the build's own summary")


def test_projects_without_tests_at_the_base_leave_nothing_to_compare(
    make_trial: TrialFactory,
) -> None:
    empty: Suites = {p: {"base": {}, "patched": {"t1": True}} for p in ("a", "b")}
    outcome = _evaluate(make_trial(TWO_REACTORS, UPGRADE_BOTH), empty)
    assert outcome.verdict is Verdict.INCONCLUSIVE
    assert outcome.reason == "no tests to compare: no test ran at the base commit"


def test_a_test_failing_at_the_base_is_left_out_and_listed(make_trial: TrialFactory) -> None:
    flaky = {"base": {"t1": True, "t2": False}, "patched": {"t1": True, "t2": False}}
    outcome = _evaluate(make_trial(TWO_REACTORS, UPGRADE_BOTH), {"a": GREEN, "b": flaky})
    assert outcome.verdict is Verdict.PASS, outcome.reason
    # A pass also says what its results rest on: these runs have no harness listener.
    assert [e.message for e in outcome.evidence] == [
        "fails at the base commit, left out: b: x.ATest#t2",
        f"results rest on {NO_LISTENER} (module a)",
        f"results rest on {NO_LISTENER} (module b)",
    ]
