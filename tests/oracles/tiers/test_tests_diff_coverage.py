"""Tier 3's diff coverage over faked runs: the graded run's coverage report and the
patch's diff say which changed lines of main code the base's tests executed; a pass that
executed none of them says "untested change" in its reason, and every envelope that ran
the suites keeps the numbers (``diff_coverage``)."""

from __future__ import annotations

from dataclasses import replace

from migration_evals.core.model import Severity, Verdict
from migration_evals.core.ports import RegistryFetch, SandboxRequest, SandboxResult
from migration_evals.oracles.baselines import BaselineCache
from migration_evals.oracles.builds import Builds
from migration_evals.oracles.tiers.base import TierOutcome, TrialContext
from migration_evals.oracles.tiers.tests import TestsOracle
from migration_evals.oracles.workspace import tree_hash
from tests.conftest import TrialFactory
from tests.fakes import GO_PASSING, BuildScript, FakeSandbox, fake_result, surefire_run

# -- Go -------------------------------------------------------------------------------------

PROFILE_AT = ".migration-evals/coverage/cover.out"
KV = (
    'package kv\n\nimport "io/ioutil"\n\n'
    "func Read(p string) ([]byte, error) {\n\treturn ioutil.ReadFile(p)\n}\n\n"
    "func Size(p string) int {\n\treturn len(p)\n}\n"
)
GO_FILES = {"go.mod": "module m\n\ngo 1.19\n", "kv/kv.go": KV, "kv/kv_test.go": "package kv\n"}
# Lines 3 (the import) and 6 (the call) change; 6 is a statement.
GO_REWRITE = {"kv/kv.go": KV.replace('"io/ioutil"', '"os"').replace("ioutil.", "os.")}


def _profile(read_ran: bool) -> str:
    """Both trees' profile: Size always runs, Read only if ``read_ran``."""
    return f"mode: set\nm/kv/kv.go:5.38,7.2 1 {int(read_ran)}\nm/kv/kv.go:9.26,11.2 1 1\n"


def _evaluate_go(context: TrialContext, profile: str | None) -> TierOutcome:
    """Tier 3 with each tree's tests passing and reporting ``profile``."""

    def run(request: SandboxRequest, patched: bool) -> SandboxResult:
        if "test" not in request.command:
            return fake_result(request)
        artifacts = {PROFILE_AT: profile} if profile is not None else {}
        return SandboxResult(0, GO_PASSING, image_id="sha256:fake", artifacts=artifacts)

    base = tree_hash(context.changeset.base_commit, None)
    sandbox = FakeSandbox(BuildScript(base, run=run))
    return TestsOracle(sandbox, builds=Builds(sandbox, BaselineCache(), registry="gate")).evaluate(
        context
    )


def test_a_pass_whose_changed_code_no_test_ran_is_an_untested_change(
    make_trial: TrialFactory,
) -> None:
    context = make_trial(GO_FILES, GO_REWRITE, "go-import-rewrite")
    outcome = _evaluate_go(context, _profile(read_ran=False))
    assert outcome.verdict is Verdict.PASS, outcome.reason
    assert outcome.reason == (
        "1 of 1 tests pass; none regressed; untested change: the base's tests execute none "
        "of the 1 changed line of main code"
    )
    assert outcome.details["diff_coverage"] == {
        "state": "untested change",
        "changed": 1,
        "covered": 0,
        "files": [{"path": "kv/kv.go", "changed": 1, "covered": 0, "uncovered_lines": [6]}],
    }
    notice = outcome.evidence[-1]
    assert (notice.path, notice.line, notice.severity) == ("kv/kv.go", 6, Severity.NOTICE)
    assert notice.message == "diff coverage: 0 of 1 changed lines executed; not executed: 6"


def test_a_pass_whose_changed_code_ran_reads_as_before(make_trial: TrialFactory) -> None:
    context = make_trial(GO_FILES, GO_REWRITE, "go-import-rewrite")
    outcome = _evaluate_go(context, _profile(read_ran=True))
    assert outcome.verdict is Verdict.PASS, outcome.reason
    assert outcome.reason == "1 of 1 tests pass; none regressed"
    assert outcome.evidence == ()
    found = outcome.details["diff_coverage"]
    assert (found["state"], found["changed"], found["covered"]) == ("executed", 1, 1)


def test_without_a_coverage_report_diff_coverage_is_not_measured(
    make_trial: TrialFactory,
) -> None:
    context = make_trial(GO_FILES, GO_REWRITE, "go-import-rewrite")
    outcome = _evaluate_go(context, None)
    found = outcome.details["diff_coverage"]
    assert found["state"] == "not measured"
    assert found["problem"] == f"the run wrote no coverage report ({PROFILE_AT})"
    assert "untested change" not in outcome.reason


# -- Maven: one report per module ------------------------------------------------------------

POM = """<project>
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.example</groupId><artifactId>calc</artifactId><version>1</version>
  <properties><maven.compiler.release>{release}</maven.compiler.release></properties>
</project>
"""
CALC = (
    "package com.example;\n\npublic class Calc {\n"
    "    public int twice(int n) {\n        return new Integer(n * 2);\n    }\n}\n"
)
JAVA_FILES = {"pom.xml": POM.format(release="8"), "src/main/java/com/example/Calc.java": CALC}
TO_17 = {"pom.xml": POM.format(release="17")}
MODERN = {
    **TO_17,
    "src/main/java/com/example/Calc.java": CALC.replace("new Integer(n * 2)", "n * 2"),
}
REPORT = ".migration-evals/coverage/modules/..xml"
JACOCO_JARS = (
    "org/jacoco/org.jacoco.agent/0.8.12/org.jacoco.agent-0.8.12-runtime.jar",
    "org/jacoco/org.jacoco.cli/0.8.12/org.jacoco.cli-0.8.12-nodeps.jar",
)


def _jacoco(line_5_ran: bool) -> str:
    """The root module's report: Calc's lines 3 (its constructor) and 5."""
    ci = 3 if line_5_ran else 0
    return (
        '<report name="r"><package name="com/example"><sourcefile name="Calc.java">'
        '<line nr="3" mi="0" ci="3" mb="0" cb="0"/>'
        f'<line nr="5" mi="{3 - ci}" ci="{ci}" mb="0" cb="0"/>'
        f'<counter type="LINE" missed="{int(not line_5_ran)}" covered="{1 + line_5_ran}"/>'
        "</sourcefile></package></report>"
    )


def _evaluate_maven(context: TrialContext, patched_passes: bool, line_5_ran: bool) -> TierOutcome:
    """Tier 3 over a Maven project whose base tests pass, the patched tree's as asked; both
    runs report ``_jacoco(line_5_ran)``; the resolution fetched JaCoCo."""

    def run(request: SandboxRequest, patched: bool) -> SandboxResult:
        if "test" not in request.command:
            return fake_result(request)
        result = surefire_run({"twice": patched_passes or not patched}, image_id="sha256:fake")
        logs = {REPORT.replace(".xml", ".log"): "", REPORT: _jacoco(line_5_ran)}
        return replace(result, artifacts={**result.artifacts, **logs})

    fetches = tuple(RegistryFetch("maven", jar, 200, "upstream") for jar in JACOCO_JARS)
    resolved = SandboxResult(0, "[INFO] BUILD SUCCESS\n", image_id="sha256:r", fetches=fetches)
    base = tree_hash(context.changeset.base_commit, None)
    sandbox = FakeSandbox(BuildScript(base, resolved=resolved, run=run))
    return TestsOracle(sandbox, builds=Builds(sandbox, BaselineCache(), registry="gate")).evaluate(
        context
    )


def test_java_changed_lines_the_tests_ran_are_counted_from_the_modules_report(
    make_trial: TrialFactory,
) -> None:
    context = make_trial(JAVA_FILES, MODERN)
    outcome = _evaluate_maven(context, patched_passes=True, line_5_ran=True)
    assert outcome.verdict is Verdict.PASS, outcome.reason
    assert "untested" not in outcome.reason
    assert outcome.details["diff_coverage"]["files"] == [
        {
            "path": "src/main/java/com/example/Calc.java",
            "changed": 1,
            "covered": 1,
            "uncovered_lines": [],
        }
    ]


def test_a_failure_keeps_the_numbers_but_is_not_marked(make_trial: TrialFactory) -> None:
    context = make_trial(JAVA_FILES, MODERN)
    outcome = _evaluate_maven(context, patched_passes=False, line_5_ran=False)
    assert outcome.verdict is Verdict.FAIL
    assert "untested change" not in outcome.reason
    assert all(e.severity is not Severity.NOTICE for e in outcome.evidence)
    assert outcome.details["diff_coverage"]["state"] == "untested change"


def test_a_pom_only_patch_changes_no_main_code(make_trial: TrialFactory) -> None:
    context = make_trial(JAVA_FILES, TO_17)
    outcome = _evaluate_maven(context, patched_passes=True, line_5_ran=False)
    assert outcome.verdict is Verdict.PASS, outcome.reason
    assert outcome.details["diff_coverage"]["state"] == "no changed main code"
    assert "untested" not in outcome.reason
