"""Tiers 2 and 3 on a real engine with hostile patches: harness-owned grading holds up.

Each test clones a bundled example, writes a patch against it with ``git diff`` and runs
the real cascade (apply, compile and tests live; a judge that always passes, so any
failure is the sandbox tiers' own).
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from dataclasses import replace
from datetime import date
from pathlib import Path

import docker
import pytest

from core.model import Changeset, Tier, Trial, Verdict
from core.ports import JudgeReply
from core.specs import SpecSet
from oracles.baselines import BaselineCache
from oracles.cascade import Budget, Cascade
from oracles.repos import RepoCache
from oracles.sandbox import DockerSandbox, SandboxLimits
from oracles.sandbox.docker import default_user
from oracles.tiers.apply import ApplyOracle
from oracles.tiers.compile import CompileOracle
from oracles.tiers.judge import JudgeOracle
from oracles.tiers.tests import TestsOracle
from tests.conftest import ROOT, diff_of, run_git
from tests.fakes import FakeJudge, judge_json

pytestmark = pytest.mark.docker

BUNDLES = ROOT / "examples" / "bundles"
PATCHES = ROOT / "examples" / "patches"


def _clone(tmp_path: Path, project: str) -> tuple[Path, str]:
    repo = tmp_path / project
    subprocess.run(
        ["git", "clone", "-q", str(BUNDLES / f"{project}.bundle"), str(repo)], check=True
    )
    return repo, run_git(repo, "rev-parse", "HEAD")


def _after_good_patch(repo: Path, project: str) -> dict[str, str]:
    """The files the example's good patch touches, as they are once it is applied."""
    good = (PATCHES / project / "good.diff").read_text()
    subprocess.run(["git", "apply"], cwd=repo, input=good, text=True, check=True)
    touched = run_git(repo, "diff", "--name-only").splitlines()
    contents = {name: (repo / name).read_text() for name in touched}
    run_git(repo, "checkout", "-q", "--", ".")
    return contents


class _Live:
    """A cascade over the live sandbox, sharing one baseline cache between trials."""

    def __init__(self, client: docker.DockerClient, specs: SpecSet, tmp_path: Path) -> None:
        limits = SandboxLimits.from_spec(specs.oracle.section("sandbox"))
        user = default_user(euid=os.geteuid(), uid=os.getuid(), gid=os.getgid())
        self.sandbox = DockerSandbox(client, limits, user=user, as_root=os.geteuid() == 0)
        self.baselines = BaselineCache()
        self.specs = specs
        self.repos = RepoCache(tmp_path / "cache")

    def grade(
        self, repo: tuple[Path, str], patch: str, recipe: str, specs: SpecSet | None = None
    ) -> Trial:
        specs = specs or self.specs
        judge = FakeJudge(lambda _r: JudgeReply(judge_json("pass", []), "end_turn"))
        oracles = [
            ApplyOracle(),
            CompileOracle(self.sandbox),
            TestsOracle(self.sandbox, self.baselines),
            JudgeOracle(judge, judge),
        ]
        changeset = Changeset(
            "live", str(repo[0]), repo[1], patch, recipe, "gpt-5", date(2022, 1, 1)
        )
        cascade = Cascade(specs, oracles, self.repos)  # type: ignore[arg-type]
        return cascade.run_trial("live", changeset, Budget(None)).trial


@pytest.fixture
def live(docker_client: docker.DockerClient, specs: SpecSet, tmp_path: Path) -> _Live:
    return _Live(docker_client, specs, tmp_path)


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
    live: _Live, tmp_path: Path
) -> None:
    repo = _clone(tmp_path, "java-calc")
    files = _after_good_patch(repo[0], "java-calc")
    calculator = "src/main/java/com/example/calc/Calculator.java"
    source = files[calculator].replace("Math::subtractExact", "(l, r) -> Math.subtractExact(r, l)")
    source = source.replace(
        "public class Calculator {\n", "public class Calculator {\n" + SPOOF_JAVA
    )
    assert source != files[calculator]
    patch = diff_of(repo[0], {**files, calculator: source})
    # No re-runs: a failure that persists is what re-runs would find; see the flaky test.
    trial = live.grade(repo, patch, "java8-to-17", _with_reruns(live.specs, 0))
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
    live: _Live, tmp_path: Path
) -> None:
    repo = _clone(tmp_path, "go-ioutil")
    files = _after_good_patch(repo[0], "go-ioutil")
    store = files["kv/store.go"]
    broken = store.replace(
        "return os.ReadFile(p)", "data, err := os.ReadFile(p)\n\treturn append(data, '!'), err"
    )
    broken = broken.replace("import (\n", 'import (\n\t"fmt"\n', 1) + SPOOF_GO
    patch = diff_of(repo[0], {**files, "kv/store.go": broken})
    trial = live.grade(repo, patch, "go-import-rewrite", _with_reruns(live.specs, 0))
    assert _tier(trial, Tier.COMPILE)[0] is Verdict.PASS
    verdict, reason = _tier(trial, Tier.TESTS)
    assert verdict is Verdict.FAIL, reason
    assert "TestPutThenGet" in " ".join(
        e.message for e in next(e for e in trial.envelopes if e.tier is Tier.TESTS).evidence
    )


def test_a_patch_that_weakens_or_deletes_a_test_is_graded_fail(live: _Live, tmp_path: Path) -> None:
    repo = _clone(tmp_path, "java-calc")
    files = _after_good_patch(repo[0], "java-calc")
    test_file = "src/test/java/com/example/calc/CalculatorTest.java"
    weakened = re.sub(r"assert\w*\(.*?\);", "", (repo[0] / test_file).read_text())
    trial = live.grade(repo, diff_of(repo[0], {**files, test_file: weakened}), "java8-to-17")
    verdict, reason = _tier(trial, Tier.TESTS)
    assert verdict is Verdict.FAIL and "edits 1 test file" in reason
    deleted = {**files, "src/test/java/com/example/calc/RpnEvaluatorTest.java": None}
    trial = live.grade(repo, diff_of(repo[0], deleted), "java8-to-17")
    verdict, reason = _tier(trial, Tier.TESTS)
    assert verdict is Verdict.FAIL and "edits 1 test file" in reason


def test_a_flaky_test_is_inconclusive(live: _Live, tmp_path: Path, specs: SpecSet) -> None:
    repo = _clone(tmp_path, "go-ioutil")
    files = _after_good_patch(repo[0], "go-ioutil")
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
    docker_client: docker.DockerClient, specs: SpecSet, tmp_path: Path
) -> None:
    recipe = specs.recipe("go-import-rewrite")
    raw = dict(recipe.raw)
    raw["sandbox"] = {
        **recipe.sandbox,
        "compile": {"command": ["sh", "-c", "head -c 1000m /dev/zero | tail"], "collect": []},
    }
    hog_specs = replace(specs, recipes={**specs.recipes, recipe.name: replace(recipe, raw=raw)})
    live = _Live(docker_client, hog_specs, tmp_path)
    live.sandbox.limits = replace(live.sandbox.limits, memory_mb=128)
    repo = _clone(tmp_path, "go-ioutil")
    trial = live.grade(repo, diff_of(repo[0], _after_good_patch(repo[0], "go-ioutil")), recipe.name)
    verdict, reason = _tier(trial, Tier.COMPILE)
    assert verdict in (Verdict.FAIL, Verdict.ERROR)
    assert reason == "build ran out of memory"
    assert trial.verdict is not Verdict.PASS
