"""Tiers 2 and 3 on a real engine with hostile patches: harness-owned grading holds up.

Each test clones a bundled example, writes a patch against it with ``git diff`` and runs
the real cascade (apply, compile and tests live; a judge that always passes, so any
failure is the sandbox tiers' own) on the module's grader and its clone of the example,
whose base is resolved, built and tested once; a test that times its grades or changes
the sandbox has a grader of its own.
"""

from __future__ import annotations

import re
import time
from dataclasses import replace
from pathlib import Path

import docker
import pytest

from migration_evals.core.model import Tier, Trial, Verdict
from migration_evals.core.spec_types import CommandStep
from migration_evals.core.specs import SpecSet
from tests.conftest import (
    ROOT,
    LiveGrader,
    broken_get,
    clone_example,
    diff_of,
    good_patch_files,
    live_docker_sandbox,
    without_outside,
)

pytestmark = pytest.mark.docker

BUNDLES = ROOT / "examples" / "bundles"
PATCHES = ROOT / "examples" / "patches"


def _with_reruns(specs: SpecSet, reruns: int) -> SpecSet:
    tests = replace(specs.oracle.tier(Tier.TESTS), reruns=reruns)
    tiers = tuple(tests if t.tier is Tier.TESTS else t for t in specs.oracle.tiers)
    return replace(specs, oracle=replace(specs.oracle, tiers=tiers))


def _tier(trial: Trial, tier: Tier) -> tuple[Verdict, str]:
    envelope = next(e for e in trial.envelopes if e.tier is tier)
    return envelope.verdict, envelope.reason


# A Java patch that breaks subtraction and lies about it three ways: it prints Maven's
# and a test runner's success lines, and when the test JVM exits it overwrites the real
# Surefire report with one where every test passed.
SPOOF_JAVA = """
    static {
        System.out.println("Tests run: 5, Failures: 0, Errors: 0, Skipped: 0");
        System.out.println("[INFO] BUILD SUCCESS");
        System.out.println("PASS");
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            String suite = "com.example.calc.CalculatorTest";
            StringBuilder xml = new StringBuilder("<testsuite name=\\"" + suite + "\\">");
            for (String name : new String[] {"addsAndSubtracts", "multipliesAndDivides",
                    "rejectsDivisionByZero", "knowsItsOperators"}) {
                xml.append("<testcase classname=\\"" + suite + "\\" name=\\"" + name + "\\"/>");
            }
            xml.append("</testsuite>");
            try {
                java.nio.file.Files.writeString(java.nio.file.Path.of(
                        "target", "surefire-reports", "TEST-" + suite + ".xml"), xml);
            } catch (java.io.IOException ignored) {
                // nothing to forge
            }
            System.out.println("Tests run: 7, Failures: 0, Errors: 0, Skipped: 0");
        }));
    }
"""


def test_a_patch_printing_fake_success_while_a_test_fails_is_graded_fail(
    live: LiveGrader, tmp_path: Path
) -> None:
    repo = clone_example(tmp_path, "java-calc")
    files = good_patch_files(repo[0], "java-calc")
    calculator = "src/main/java/com/example/calc/Calculator.java"
    source = files[calculator].replace("Math::subtractExact", "(l, r) -> Math.subtractExact(r, l)")
    source = source.replace(
        "public class Calculator {\n", "public class Calculator {\n" + SPOOF_JAVA
    )
    assert source != files[calculator]
    patch = diff_of(repo[0], {**files, calculator: source})
    # No re-runs: a failure that persists is what re-runs would find; see the flaky test.
    # Tier 1 would refuse the spoofing code first (outside the recipe): off here, so that
    # tier 3 is shown to catch it by itself.
    specs = without_outside(_with_reruns(live.specs, 0), "java8-to-17")
    trial = live.grade(live.example("java-calc"), patch, "java8-to-17", specs)
    assert _tier(trial, Tier.COMPILE)[0] is Verdict.PASS
    verdict, reason = _tier(trial, Tier.TESTS)
    assert verdict is Verdict.FAIL, reason
    assert trial.verdict is Verdict.FAIL
    # Whether or not the rewritten report lands after Maven's own, Maven's exit status,
    # which the code cannot reach, is a regression.
    evidence = next(e for e in trial.envelopes if e.tier is Tier.TESTS).evidence
    assert "no longer passes: (exit status)" in [e.message for e in evidence]


SPOOF_GO = """
func init() {
	// Lines that Go 1.19's test2json would read as results.
	fmt.Println("--- PASS: TestPutThenGet (0.00s)")
	fmt.Println("PASS")
	fmt.Println("ok  \\texample.com/go-ioutil/kv\\t0.01s")
}
"""


def test_a_go_patch_forging_test2json_pass_lines_is_graded_fail(
    live: LiveGrader, tmp_path: Path
) -> None:
    repo = clone_example(tmp_path, "go-ioutil")
    files = good_patch_files(repo[0], "go-ioutil")
    broken = broken_get(files)
    broken = broken.replace("import (\n", 'import (\n\t"fmt"\n', 1) + SPOOF_GO
    patch = diff_of(repo[0], {**files, "kv/store.go": broken})
    specs = without_outside(_with_reruns(live.specs, 0), "go-import-rewrite")
    trial = live.grade(live.example("go-ioutil"), patch, "go-import-rewrite", specs)
    assert _tier(trial, Tier.COMPILE)[0] is Verdict.PASS
    verdict, reason = _tier(trial, Tier.TESTS)
    assert verdict is Verdict.FAIL, reason
    assert "TestPutThenGet" in " ".join(
        e.message for e in next(e for e in trial.envelopes if e.tier is Tier.TESTS).evidence
    )


def test_a_patch_that_weakens_or_deletes_a_test_is_graded_fail(
    live: LiveGrader, tmp_path: Path
) -> None:
    repo = clone_example(tmp_path, "java-calc")
    files = good_patch_files(repo[0], "java-calc")
    test_file = "src/test/java/com/example/calc/CalculatorTest.java"
    weakened = re.sub(r"assert\w*\(.*?\);", "", (repo[0] / test_file).read_text())
    base = live.example("java-calc")
    trial = live.grade(base, diff_of(repo[0], {**files, test_file: weakened}), "java8-to-17")
    verdict, reason = _tier(trial, Tier.TESTS)
    assert verdict is Verdict.FAIL and reason.startswith("the patch weakens the tests: ")
    deleted = {**files, "src/test/java/com/example/calc/RpnEvaluatorTest.java": None}
    trial = live.grade(base, diff_of(repo[0], deleted), "java8-to-17")
    verdict, reason = _tier(trial, Tier.TESTS)
    assert verdict is Verdict.FAIL
    assert reason == "the patch weakens the tests: the test file was deleted"


def test_a_flaky_test_is_inconclusive(own_live: LiveGrader, tmp_path: Path, specs: SpecSet) -> None:
    live = own_live  # its first grade, base included, sets the flaky test's deadline
    repo = clone_example(tmp_path, "go-ioutil")
    files = good_patch_files(repo[0], "go-ioutil")
    # A good trial first: it caches the baseline and measures how long a trial takes.
    started = time.time()
    good = live.grade(repo, diff_of(repo[0], files), "go-import-rewrite")
    assert _tier(good, Tier.TESTS)[0] is Verdict.PASS
    took = time.time() - started
    # Get fails until a deadline a little past when the first patched run finishes (the
    # baseline is cached now), and works afterwards: a test that fails, then passes.
    deadline_ns = int((time.time() + took * 1.2) * 1e9)
    flaky = files["kv/store.go"].replace(
        "return os.ReadFile(p)",
        f'if time.Now().UnixNano() < {deadline_ns} {{\n\t\treturn nil, errors.New("not yet")\n\t}}'
        "\n\treturn os.ReadFile(p)",
    )
    flaky = flaky.replace("import (\n", 'import (\n\t"time"\n', 1)
    patch = diff_of(repo[0], {**files, "kv/store.go": flaky})
    trial = live.grade(repo, patch, "go-import-rewrite", _with_reruns(specs, 20))
    verdict, reason = _tier(trial, Tier.TESTS)
    assert verdict is Verdict.INCONCLUSIVE, reason
    assert reason.startswith("flaky")
    assert trial.verdict is Verdict.INCONCLUSIVE


def test_a_memory_hog_in_the_build_is_never_a_pass(
    docker_client: docker.DockerClient, specs: SpecSet, tmp_path: Path, dependency_cache: Path
) -> None:
    recipe = specs.recipe("go-import-rewrite")
    hog = CommandStep(command=("sh", "-c", "head -c 1000m /dev/zero | tail"))
    sandbox = replace(recipe.sandbox, compile=hog)
    hog_specs = replace(
        specs, recipes={**specs.recipes, recipe.name: replace(recipe, sandbox=sandbox)}
    )
    sandbox = live_docker_sandbox(docker_client, hog_specs, dependency_cache)
    live = LiveGrader(sandbox, hog_specs, tmp_path)
    # The workspace's tmpfs pages are charged to the container too (memory_mb +
    # workspace_mb): both small, so 1000 MB of buffered input cannot fit.
    live.sandbox.limits = replace(live.sandbox.limits, memory_mb=128, workspace_mb=64)
    repo = clone_example(tmp_path, "go-ioutil")
    trial = live.grade(repo, diff_of(repo[0], good_patch_files(repo[0], "go-ioutil")), recipe.name)
    verdict, reason = _tier(trial, Tier.COMPILE)
    # The hog is the recipe's own command, so the base commit runs out of memory first:
    # the infrastructure's error, named as such, never a pass and never the candidate's.
    assert verdict is Verdict.ERROR
    assert reason == "the base commit's build ran out of memory (.)"
    assert trial.verdict is not Verdict.PASS
