"""Tier 3's reports on a real engine: found in every module and package, cross-checked
with what the build tool printed and its exit status, and never a vacuous pass.

Each test clones a bundled example, writes a hostile patch with ``git diff`` and grades
it live (a judge that always passes, so any failure is the sandbox tiers' own) on the
module's grader and its clone of the example; a test that needs another base commit
grades its own clone.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

import pytest

from migration_evals.core.model import Envelope, Tier, Trial, Verdict
from migration_evals.core.specs import SpecSet
from tests.conftest import (
    ROOT,
    LiveGrader,
    broken_get,
    clone_example,
    diff_of,
    good_patch_files,
    run_git,
    without_integrity,
    without_outside,
)

pytestmark = pytest.mark.docker

BUNDLES = ROOT / "examples" / "bundles"
PATCHES = ROOT / "examples" / "patches"


def _no_reruns(specs: SpecSet) -> SpecSet:
    tests = replace(specs.oracle.tier(Tier.TESTS), reruns=0)
    tiers = tuple(tests if t.tier is Tier.TESTS else t for t in specs.oracle.tiers)
    return replace(specs, oracle=replace(specs.oracle, tiers=tiers))


def _tests(trial: Trial) -> Envelope:
    return next(e for e in trial.envelopes if e.tier is Tier.TESTS)


def _rebase(repo: tuple[Path, str], changes: Mapping[str, str | None]) -> tuple[Path, str]:
    """A new base commit on top of the example: ``changes`` written (None deletes)."""
    root = repo[0]
    for name, content in changes.items():
        if content is None:
            (root / name).unlink()
        else:
            (root / name).write_text(content)
    run_git(root, "add", "-A")
    run_git(root, "commit", "-q", "-m", "base for the test")
    return root, run_git(root, "rev-parse", "HEAD")


def test_a_module_failure_hidden_by_test_failure_ignore_is_graded_fail(
    live: LiveGrader, tmp_path: Path
) -> None:
    """java-nested's reactor (service/, modules core and app): the patch breaks Money in
    core, so a test in each module fails, and sets ``maven.test.failure.ignore`` in the
    parent, so Maven logs the failures and exits 0."""
    repo = clone_example(tmp_path, "java-nested")
    files = good_patch_files(repo[0], "java-nested")
    money = "service/core/src/main/java/com/example/ledger/core/Money.java"
    broken = files[money].replace("Math.addExact(cents, other.cents)", "cents - other.cents")
    pom = files["service/pom.xml"].replace(
        "<properties>\n",
        "<properties>\n    <maven.test.failure.ignore>true</maven.test.failure.ignore>\n",
    )
    assert broken != files[money] and pom != files["service/pom.xml"]
    patch = diff_of(repo[0], {**files, money: broken, "service/pom.xml": pom})
    # Tier 1 refuses the setting itself; with that check off, the reports must say it.
    base = live.example("java-nested")
    assert live.grade(base, patch, "java8-to-17").verdict is Verdict.FAIL
    unguarded = without_integrity(_no_reruns(live.specs), "java8-to-17", "failure-ignore")
    trial = live.grade(base, patch, "java8-to-17", unguarded)
    envelope = _tests(trial)
    assert envelope.details["patched"]["exit_code"] == 0  # type: ignore[index]
    assert envelope.verdict is Verdict.FAIL, envelope.reason
    assert envelope.reason == (
        "reports disagree with the build's own summary:"
        " the build exited 0 although it logged 3 test failure(s)"
    )
    assert trial.verdict is Verdict.FAIL


def test_a_base_without_tests_is_inconclusive(live: LiveGrader, tmp_path: Path) -> None:
    repo = clone_example(tmp_path, "go-ioutil")
    files = good_patch_files(repo[0], "go-ioutil")
    repo = _rebase(repo, {"kv/store_test.go": None})
    trial = live.grade(repo, diff_of(repo[0], files), "go-import-rewrite")
    envelope = _tests(trial)
    assert envelope.verdict is Verdict.INCONCLUSIVE, envelope.reason
    assert envelope.reason == "no tests to compare: no test ran at the base commit"
    assert trial.verdict is Verdict.INCONCLUSIVE


BROKEN_AT_BASE = """package kv

import "testing"

func TestBrokenAtBase(t *testing.T) {
	t.Fatal("this test fails at the base commit")
}
"""


def test_a_test_failing_at_the_base_is_left_out_and_listed(
    live: LiveGrader, tmp_path: Path
) -> None:
    repo = clone_example(tmp_path, "go-ioutil")
    files = good_patch_files(repo[0], "go-ioutil")
    repo = _rebase(repo, {"kv/broken_test.go": BROKEN_AT_BASE})
    trial = live.grade(repo, diff_of(repo[0], files), "go-import-rewrite")
    envelope = _tests(trial)
    assert envelope.verdict is Verdict.PASS, envelope.reason
    left_out = [e.message for e in envelope.evidence if e.message.startswith("fails at")]
    assert left_out == [
        "fails at the base commit, left out: example.com/go-ioutil/kv.TestBrokenAtBase"
    ]


# Code of the package under test prints the line go test itself prints for a package
# that passed, while the rewrite it ships breaks Get.
FORGED_OK = """
func init() {
	fmt.Println("ok  \texample.com/go-ioutil/kv\t0.01s")
}
"""


def test_a_forged_go_test_summary_line_disagrees_with_the_json(
    live: LiveGrader, tmp_path: Path
) -> None:
    repo = clone_example(tmp_path, "go-ioutil")
    files = good_patch_files(repo[0], "go-ioutil")
    broken = broken_get(files)
    broken = broken.replace("import (\n", 'import (\n\t"fmt"\n', 1) + FORGED_OK
    patch = diff_of(repo[0], {**files, "kv/store.go": broken})
    # Tier 1 would refuse the init first (outside the recipe): off, so tier 3 shows itself.
    specs = without_outside(_no_reruns(live.specs), "go-import-rewrite")
    trial = live.grade(live.example("go-ioutil"), patch, "go-import-rewrite", specs)
    envelope = _tests(trial)
    assert envelope.verdict is Verdict.FAIL, envelope.reason
    assert envelope.reason == (
        "reports disagree with the build's own summary:"
        " go test printed ok for package example.com/go-ioutil/kv, which failed"
    )


# Code of the package under test that, when it runs inside a test binary, pipes the
# binary's standard output through a rewrite of every failure line into a pass line.
REWRITE_FAILURES = """
func init() {
	if !strings.HasSuffix(os.Args[0], ".test") {
		return
	}
	r, w, err := os.Pipe()
	if err != nil {
		return
	}
	real := os.Stdout
	os.Stdout = w
	go func() {
		lines := bufio.NewScanner(r)
		for lines.Scan() {
			line := strings.ReplaceAll(lines.Text(), "--- FAIL", "--- PASS")
			if line == "FAIL" {
				line = "PASS"
			}
			fmt.Fprintln(real, line)
		}
	}()
}
"""


def test_go_test_output_rewritten_to_pass_is_never_a_pass(live: LiveGrader, tmp_path: Path) -> None:
    """Every failure line reads as a pass (test2json believes the rewritten frames), but
    the test binary still exits 1 and go test fails the package: with every line through,
    each test "passed" in a package that failed, a disagreement; with the last lines lost
    in the pipe when the binary exits (timing decides which), the tests they would have
    finished are missing. Either way a fail, never a pass."""
    repo = clone_example(tmp_path, "go-ioutil")
    files = good_patch_files(repo[0], "go-ioutil")
    broken = broken_get(files)
    imports = 'import (\n\t"bufio"\n\t"fmt"\n'
    broken = broken.replace("import (\n", imports, 1) + REWRITE_FAILURES
    patch = diff_of(repo[0], {**files, "kv/store.go": broken})
    # Tier 1 would refuse the init first (outside the recipe): off, so tier 3 shows itself.
    specs = without_outside(_no_reruns(live.specs), "go-import-rewrite")
    trial = live.grade(live.example("go-ioutil"), patch, "go-import-rewrite", specs)
    envelope = _tests(trial)
    assert envelope.verdict is Verdict.FAIL, envelope.reason
    # How many rewritten lines get through before the binary exits is a matter of timing:
    # a disagreement over however many arrived, or the tests that never arrived.
    disagreement = re.fullmatch(
        r"reports disagree with the build's own summary: package example.com/go-ioutil/kv"
        r" failed although each of its [1-5] test\(s\) passed",
        envelope.reason,
    )
    dropped = re.fullmatch(r"number of tests dropped from 5 to [0-4]", envelope.reason)
    assert disagreement or dropped, envelope.reason
