"""Tier 3's coverage guard over faked runs: the same runs that grade the tests carry the
coverage report, and a passing suite that lowered coverage (or stopped reporting it)
fails; one whose coverage could not be compared says so in its reason. Maven runs report
per module. Also which base runs over the same go module are kept for later trials."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from migration_evals.core.model import Verdict
from migration_evals.core.ports import RegistryFetch, SandboxRequest, SandboxResult
from migration_evals.oracles.baselines import BaselineCache
from migration_evals.oracles.builds import Builds
from migration_evals.oracles.tiers.base import TierOutcome, TrialContext
from migration_evals.oracles.tiers.tests import TestsOracle
from migration_evals.oracles.workspace import tree_hash
from tests.conftest import TrialFactory
from tests.fakes import GO_PASSING, BuildScript, FakeSandbox, fake_result, surefire_run

REPORT = ".migration-evals/coverage/cover.out"
GO_MOD = "module m\n\ngo 1.19\n"
KV = (
    'package kv\n\nimport "io/ioutil"\n\n'
    "func Read(p string) ([]byte, error) { return ioutil.ReadFile(p) }\n"
)
FILES = {"go.mod": GO_MOD, "kv/kv.go": KV, "kv/kv_test.go": "package kv\n"}
REWRITE = {"kv/kv.go": KV.replace('"io/ioutil"', '"os"').replace("ioutil.", "os.")}
# kv.go: 10 statements, 8 run.
COVERED = "mode: set\nm/kv/kv.go:1.1,2.2 8 1\nm/kv/kv.go:3.1,4.2 2 0\n"
# kv.go: the same 8 run, 10 more that no test reaches.
DILUTED = COVERED + "m/kv/kv.go:5.1,9.2 10 0\n"


def _evaluate(context: TrialContext, profiles: Mapping[bool, str | None]) -> TierOutcome:
    """Tier 3 with each tree's tests passing and reporting ``profiles[patched]``."""

    def run(request: SandboxRequest, patched: bool) -> SandboxResult:
        if "test" not in request.command:
            return fake_result(request)
        profile = profiles[patched]
        artifacts = {REPORT: profile} if profile is not None else {}
        return SandboxResult(0, GO_PASSING, image_id="sha256:fake", artifacts=artifacts)

    base = tree_hash(context.changeset.base_commit, None)
    sandbox = FakeSandbox(BuildScript(base, run=run))
    oracle = TestsOracle(sandbox, builds=Builds(sandbox, BaselineCache(), registry="gate"))
    outcome = oracle.evaluate(context)
    tests = [r for r in sandbox.requests if "test" in r.command]
    assert tests and all(r.command[:2] == ("sh", "-c") for r in tests), "not run measured"
    return outcome


def test_unchanged_coverage_passes_and_the_envelope_has_both_numbers(
    make_trial: TrialFactory,
) -> None:
    context = make_trial(FILES, REWRITE, "go-import-rewrite")
    outcome = _evaluate(context, {False: COVERED, True: COVERED})
    assert outcome.verdict is Verdict.PASS, outcome.reason
    coverage = outcome.details["coverage"]
    assert coverage["base"]["percent"] == coverage["patched"]["percent"] == 80.0
    assert coverage["drop"] == 0.0


def test_coverage_lowered_beyond_the_recipes_limit_fails_naming_the_file(
    make_trial: TrialFactory,
) -> None:
    context = make_trial(FILES, REWRITE, "go-import-rewrite")
    outcome = _evaluate(context, {False: COVERED, True: DILUTED})
    assert outcome.verdict is Verdict.FAIL
    assert outcome.reason.startswith("coverage of the main code fell by 40.0 points")
    assert [e.path for e in outcome.evidence] == ["m/kv/kv.go"]
    assert outcome.details["coverage"]["patched"]["percent"] == 40.0


def test_a_patched_run_without_its_report_fails_where_the_base_had_one(
    make_trial: TrialFactory,
) -> None:
    context = make_trial(FILES, REWRITE, "go-import-rewrite")
    outcome = _evaluate(context, {False: COVERED, True: None})
    assert outcome.verdict is Verdict.FAIL
    assert "switch the coverage measurement off" in outcome.reason


def test_a_base_without_a_report_leaves_the_verdict_to_the_tests(
    make_trial: TrialFactory,
) -> None:
    context = make_trial(FILES, REWRITE, "go-import-rewrite")
    outcome = _evaluate(context, {False: None, True: DILUTED})
    assert outcome.verdict is Verdict.PASS, outcome.reason
    assert outcome.details["coverage"]["base"]["measured"] is False
    # A pass without the guard never reads like a guarded one.
    assert outcome.reason.endswith(
        f"; coverage not measured at the base commit: the run wrote no coverage report ({REPORT})"
    )


def _base_runs(context: TrialContext, cache: BaselineCache, *, truncated: bool) -> int:
    """Grade tier 3 with ``cache``; how many base test runs the sandbox saw."""
    base = tree_hash(context.changeset.base_commit, None)
    seen: list[bool] = []

    def run(request: SandboxRequest, patched: bool) -> SandboxResult:
        if "test" not in request.command:
            return fake_result(request)
        seen.append(patched)
        cut = truncated and not patched
        return SandboxResult(0, GO_PASSING, image_id="sha256:fake", output_truncated=cut)

    sandbox = FakeSandbox(BuildScript(base, run=run))
    builds = Builds(sandbox, BaselineCache(), registry="gate")
    TestsOracle(sandbox, baselines=cache, builds=builds).evaluate(context)
    return seen.count(False)


def test_a_base_run_whose_event_stream_was_cut_is_run_again_not_reused(
    make_trial: TrialFactory,
) -> None:
    context = make_trial(FILES, REWRITE, "go-import-rewrite")
    cache = BaselineCache()
    assert _base_runs(context, cache, truncated=True) == 1
    assert _base_runs(context, cache, truncated=True) == 1  # not kept: run again
    whole = BaselineCache()
    assert _base_runs(context, whole, truncated=False) == 1
    assert _base_runs(context, whole, truncated=False) == 0  # kept: reused


# -- Maven: one report per module -----------------------------------------------------------

PARENT = """<project>
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.example</groupId><artifactId>parent</artifactId><version>1</version>
  <packaging>pom</packaging>
  <modules><module>a</module><module>b</module></modules>
  <properties><maven.compiler.release>{release}</maven.compiler.release></properties>
</project>
"""
CHILD = """<project>
  <modelVersion>4.0.0</modelVersion>
  <parent><groupId>com.example</groupId><artifactId>parent</artifactId><version>1</version></parent>
  <artifactId>{name}</artifactId>
</project>
"""
UTIL = "package com.example;\n\npublic class Util {\n}\n"
# Both modules define com.example.Util: one JaCoCo report could not hold both.
TWO_MODULES = {
    "pom.xml": PARENT.format(release="8"),
    "a/pom.xml": CHILD.format(name="a"),
    "a/src/main/java/com/example/Util.java": UTIL,
    "b/pom.xml": CHILD.format(name="b"),
    "b/src/main/java/com/example/Util.java": UTIL,
}
TO_17 = {"pom.xml": PARENT.format(release="17")}
MODULES = ".migration-evals/coverage/modules"
JACOCO_JARS = (
    "org/jacoco/org.jacoco.agent/0.8.12/org.jacoco.agent-0.8.12-runtime.jar",
    "org/jacoco/org.jacoco.cli/0.8.12/org.jacoco.cli-0.8.12-nodeps.jar",
)
# A module's coverage: the lines of its Util.java covered of 10, or None for a module
# JaCoCo's CLI failed on (its log, no report).
Modules = Mapping[str, int | None]


def _module_reports(modules: Modules) -> dict[str, str]:
    artifacts = {}
    for name, covered in modules.items():
        artifacts[f"{MODULES}/{name}.log"] = (
            "" if covered else "Caused by: java.io.IOException: boom"
        )
        if covered is not None:
            artifacts[f"{MODULES}/{name}.xml"] = (
                '<report name="r"><package name="com/example"><sourcefile name="Util.java">'
                f'<counter type="LINE" missed="{10 - covered}" covered="{covered}"/>'
                "</sourcefile></package></report>"
            )
    return artifacts


def _evaluate_maven(context: TrialContext, modules: Mapping[bool, Modules]) -> TierOutcome:
    """Tier 3 over a Maven reactor whose tests pass on both trees, each run's coverage
    reports per module as ``modules[patched]`` says; the resolution fetched JaCoCo."""

    def run(request: SandboxRequest, patched: bool) -> SandboxResult:
        if "test" not in request.command:
            return fake_result(request)
        result = surefire_run({"passes": True}, image_id="sha256:fake")
        return replace(result, artifacts={**result.artifacts, **_module_reports(modules[patched])})

    fetches = tuple(RegistryFetch("maven", jar, 200, "upstream") for jar in JACOCO_JARS)
    resolved = SandboxResult(0, "[INFO] BUILD SUCCESS\n", image_id="sha256:r", fetches=fetches)
    base = tree_hash(context.changeset.base_commit, None)
    sandbox = FakeSandbox(BuildScript(base, resolved=resolved, run=run))
    builds = Builds(sandbox, BaselineCache(), registry="gate")
    return TestsOracle(sandbox, builds=builds).evaluate(context)


def test_one_class_name_in_two_modules_is_two_files_and_a_fall_in_one_names_it(
    make_trial: TrialFactory,
) -> None:
    context = make_trial(TWO_MODULES, TO_17)
    outcome = _evaluate_maven(context, {False: {"a": 5, "b": 8}, True: {"a": 5, "b": 2}})
    assert outcome.verdict is Verdict.FAIL, outcome.reason
    assert outcome.reason.startswith("coverage of the main code fell by 30.0 points")
    assert [e.path for e in outcome.evidence] == ["b: com/example/Util.java"]
    assert outcome.details["coverage"]["base"]["files"] == 2


def test_a_pass_whose_base_could_not_be_measured_says_so_in_its_reason(
    make_trial: TrialFactory,
) -> None:
    context = make_trial(TWO_MODULES, TO_17)
    outcome = _evaluate_maven(context, {False: {"a": 5, "b": None}, True: {"a": 5, "b": 2}})
    assert outcome.verdict is Verdict.PASS, outcome.reason
    assert outcome.reason.endswith(
        "; none regressed; coverage not measured at the base commit: "
        "b: the coverage tool wrote no report (java.io.IOException: boom)"
    )


def test_a_guarded_pass_reads_as_before(make_trial: TrialFactory) -> None:
    context = make_trial(TWO_MODULES, TO_17)
    outcome = _evaluate_maven(context, {False: {"a": 5, "b": 8}, True: {"a": 5, "b": 8}})
    assert outcome.verdict is Verdict.PASS, outcome.reason
    assert outcome.reason.endswith("; none regressed")
