"""Tier 3's details carry each side's counts, as the build tool printed them, and the
toolchain each side ran on, from its own resolution."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from migration_evals.core.model import Verdict
from migration_evals.core.ports import SandboxRequest, SandboxResult
from migration_evals.oracles.baselines import BaselineCache
from migration_evals.oracles.builds import Builds
from migration_evals.oracles.tiers.base import TierOutcome, TrialContext
from migration_evals.oracles.tiers.tests import TestsOracle
from migration_evals.oracles.workspace import tree_hash
from tests.conftest import TrialFactory
from tests.fakes import GO_PASSING, BuildScript, FakeSandbox, fake_result, surefire_run
from tests.oracles.tiers.test_tests import TWO_REACTORS, UPGRADE_BOTH

JDK8 = "Apache Maven 3.9.11\nJava version: 1.8.0_504, vendor: Temurin\n"
JDK17 = "Apache Maven 3.9.11\nJava version: 17.0.15, vendor: Temurin\n"
# Each tree's pom names its release: the base's resolution runs on JDK 8, the patched on 17.
BY_RELEASE = {
    "release>8<": SandboxResult(0, JDK8, image_id="sha256:r8"),
    "release>17<": SandboxResult(0, JDK17, image_id="sha256:r17"),
}
Run = Callable[[SandboxRequest, bool], SandboxResult]


def _evaluate(
    context: TrialContext,
    run: Run,
    resolutions: Mapping[str, SandboxResult] | None = None,
    resolved: str = "",
) -> TierOutcome:
    """Tier 3 with each suite's run answered by ``run``; each tree's resolution prints the
    first of ``resolutions`` its build file contains, else ``resolved``."""

    def respond(request: SandboxRequest, patched: bool) -> SandboxResult:
        return run(request, patched) if "test" in request.command else fake_result(request)

    base = tree_hash(context.changeset.base_commit, None)
    found = SandboxResult(0, resolved, image_id="sha256:r")
    sandbox = FakeSandbox(BuildScript(base, resolutions or {}, found, respond))
    builds = Builds(sandbox, BaselineCache(), registry="gate")
    return TestsOracle(sandbox, builds=builds).evaluate(context)


def _maven(tests: Mapping[str, Mapping[bool, Mapping[str, bool]]]) -> Run:
    """Each project's (its workdir's) suite per side: test name -> passes."""

    def run(request: SandboxRequest, patched: bool) -> SandboxResult:
        return surefire_run(tests[request.workdir][patched], image_id="sha256:fake")

    return run


def test_each_side_carries_the_counts_summed_over_projects_and_its_own_jdk(
    make_trial: TrialFactory,
) -> None:
    green = {"t1": True, "t2": True}
    suites = {
        "a": {False: green, True: green},
        "b": {False: {**green, "t3": True}, True: {**green, "t3": False}},
    }
    context = make_trial(TWO_REACTORS, UPGRADE_BOTH)
    outcome = _evaluate(context, _maven(suites), BY_RELEASE)
    assert outcome.verdict is Verdict.FAIL
    base, patched = outcome.details["baseline"], outcome.details["patched"]
    counts = ("tests_run", "tests_failed", "tests_errors", "tests_skipped")
    assert [base[k] for k in counts] == [5, 0, 0, 0]
    assert [patched[k] for k in counts] == [5, 1, 0, 0]
    assert (base["jdk"], patched["jdk"]) == ("1.8.0_504", "17.0.15")
    assert base["toolchain"] == {"maven": "3.9.11", "java": "1.8.0_504"}
    # The run's own keys stay: those of the first project's run (a's, green on both).
    assert (base["exit_code"], patched["exit_code"]) == (0, 0)


def test_the_counts_are_of_each_sides_first_run_when_failing_tests_are_re_run(
    make_trial: TrialFactory,
) -> None:
    def run(request: SandboxRequest, patched: bool) -> SandboxResult:
        passes = not patched or request.attempt > 0  # fails once, then passes: flaky
        return surefire_run({"t1": True, "t2": passes}, image_id="sha256:fake")

    files = {k: v for k, v in TWO_REACTORS.items() if k.startswith("a/")}
    outcome = _evaluate(make_trial(files, {"a/pom.xml": UPGRADE_BOTH["a/pom.xml"]}), run)
    assert outcome.verdict is Verdict.INCONCLUSIVE, outcome.reason
    assert outcome.details["reruns"] == 1
    assert outcome.details["patched"]["tests_failed"] == 1
    assert outcome.details["baseline"]["tests_failed"] == 0


def test_the_baseline_keeps_as_long_a_tail_as_the_patched_run(
    make_trial: TrialFactory,
) -> None:
    def run(request: SandboxRequest, patched: bool) -> SandboxResult:
        result = surefire_run({"t1": True}, image_id="sha256:fake")
        return replace(result, output="[INFO] Downloading x\n" * 300 + result.output)

    files = {k: v for k, v in TWO_REACTORS.items() if k.startswith("a/")}
    outcome = _evaluate(make_trial(files, {"a/pom.xml": UPGRADE_BOTH["a/pom.xml"]}), run)
    tail = outcome.details["baseline"]["output_tail"]
    assert len(tail) == len(outcome.details["patched"]["output_tail"]) == 4000
    assert "Tests run: 1, Failures: 0, Errors: 0, Skipped: 0" in tail


GO_MOD = "module m\n\ngo 1.19\n"
KV = 'package kv\n\nimport "io/ioutil"\n\nvar _ = ioutil.Discard\n'
GO_FILES = {"go.mod": GO_MOD, "kv/kv.go": KV, "kv/kv_test.go": "package kv\n"}
GO_REWRITE = {"kv/kv.go": KV.replace('"io/ioutil"', '"io"').replace("ioutil.", "io.")}
GO_SUBTESTS = (
    '{"Action":"run","Package":"m/kv","Test":"TestA"}\n'
    '{"Action":"run","Package":"m/kv","Test":"TestA/one"}\n'
    '{"Action":"pass","Package":"m/kv","Test":"TestA/one"}\n'
    '{"Action":"run","Package":"m/kv","Test":"TestA/two"}\n'
    '{"Action":"skip","Package":"m/kv","Test":"TestA/two"}\n'
    '{"Action":"pass","Package":"m/kv","Test":"TestA"}\n'
    '{"Action":"output","Package":"m/kv","Output":"ok  \\tm/kv\\t0.01s\\n"}\n'
    '{"Action":"pass","Package":"m/kv"}\n'
)


def test_a_go_sides_counts_are_its_test_events_subtests_included(
    make_trial: TrialFactory,
) -> None:
    def run(request: SandboxRequest, patched: bool) -> SandboxResult:
        return SandboxResult(0, GO_SUBTESTS if patched else GO_PASSING, image_id="sha256:f")

    context = make_trial(GO_FILES, GO_REWRITE, "go-import-rewrite")
    outcome = _evaluate(context, run, resolved="go version go1.22.12 linux/amd64\n")
    base, patched = outcome.details["baseline"], outcome.details["patched"]
    assert (base["tests_run"], base["tests_skipped"]) == (1, 0)
    assert (patched["tests_run"], patched["tests_failed"], patched["tests_skipped"]) == (3, 0, 1)
    assert patched["tests_errors"] == 0
    assert patched["toolchain"] == {"go": "go1.22.12"}
    assert "jdk" not in patched
