"""Tier 3 grades the base commit's tests, live: a test file the patch adds cannot rewrite
the runner's output, the recipe's own rewrite of a test file passes, and an edit that
weakens or skips a test fails naming it.

Patches are written against the bundled examples (and one small module made here whose
only io/ioutil user is its test file), then graded by the real cascade as in
``test_tiers_live``, on the module's grader and its clones of the examples.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from migration_evals.core.model import Tier, Trial, Verdict
from migration_evals.core.specs import SpecSet
from tests.conftest import (
    LiveGrader,
    RepoFactory,
    broken_get,
    clone_example,
    diff_of,
    good_patch_files,
    without_integrity,
)
from tests.oracles.test_tiers_live import _tier, _with_reruns

pytestmark = pytest.mark.docker


def no_reruns(live: LiveGrader) -> SpecSet:
    return _with_reruns(live.specs, 0)


def _tests_evidence(trial: Trial) -> list[str]:
    envelope = next(e for e in trial.envelopes if e.tier is Tier.TESTS)
    return [str(e) for e in envelope.evidence]


# Runs the package's tests with their output rewritten so that every failure reads as a
# pass, then exits 0: on the patched tree's own suite, "5 of 5 tests pass".
OUTPUT_REWRITING_TEST_MAIN = """package kv

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestMain(m *testing.M) {
	stdout := os.Stdout
	r, w, _ := os.Pipe()
	os.Stdout = w
	done := make(chan struct{})
	go func() {
		lines := bufio.NewScanner(r)
		for lines.Scan() {
			fmt.Fprintln(stdout, strings.ReplaceAll(lines.Text(), "FAIL", "PASS"))
		}
		close(done)
	}()
	m.Run()
	w.Close()
	<-done
	os.Exit(0)
}
"""


def test_a_new_test_main_rewriting_the_runners_output_cannot_make_broken_code_pass(
    live: LiveGrader, tmp_path: Path
) -> None:
    repo = clone_example(tmp_path, "go-ioutil")
    files = good_patch_files(repo[0], "go-ioutil")
    broken = broken_get(files)
    changes = {**files, "kv/store.go": broken, "kv/zz_main_test.go": OUTPUT_REWRITING_TEST_MAIN}
    # No re-runs: the failure persists, as re-runs would find.
    patch = diff_of(repo[0], changes)
    trial = live.grade(live.example("go-ioutil"), patch, "go-import-rewrite", no_reruns(live))
    assert _tier(trial, Tier.COMPILE)[0] is Verdict.PASS
    verdict, reason = _tier(trial, Tier.TESTS)
    assert verdict is Verdict.FAIL, reason
    evidence = _tests_evidence(trial)
    assert any("TestPutThenGet" in line for line in evidence), evidence
    assert "kv/zz_main_test.go: a new test file (defines TestMain): left out of grading" in evidence


# A module whose only io/ioutil user is its test file: a correct rewrite must edit it.
TEST_ONLY = {
    "go.mod": "module example.com/testonly\n\ngo 1.19\n",
    "notes/notes.go": """package notes

import (
	"os"
	"strings"
)

// Title is the first line of the note stored at path.
func Title(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return strings.SplitN(string(data), "\\n", 2)[0], nil
}
""",
    "notes/notes_test.go": """package notes

import (
	"io/ioutil"
	"path/filepath"
	"testing"
)

func TestTitle(t *testing.T) {
	dir, err := ioutil.TempDir("", "notes-")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "a.txt")
	if err := ioutil.WriteFile(path, []byte("Groceries\\nmilk\\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := Title(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != "Groceries" {
		t.Fatalf("Title = %q, want %q", got, "Groceries")
	}
}
""",
}
ASSERTION = """	if got != "Groceries" {
		t.Fatalf("Title = %q, want %q", got, "Groceries")
	}
"""


def _rewritten_test() -> str:
    return (
        TEST_ONLY["notes/notes_test.go"]
        .replace('"io/ioutil"', '"os"')
        .replace("ioutil.TempDir", "os.MkdirTemp")
        .replace("ioutil.WriteFile", "os.WriteFile")
    )


def test_a_repository_whose_only_ioutil_user_is_a_test_file_can_pass(
    live: LiveGrader, make_repo: RepoFactory
) -> None:
    repo = make_repo(TEST_ONLY)
    patch = diff_of(repo[0], {"notes/notes_test.go": _rewritten_test()})
    trial = live.grade(repo, patch, "go-import-rewrite")
    # Tiers 1-3 pass (the live grader's judge quotes nothing, so tier 4 says nothing).
    for tier in (Tier.APPLY, Tier.COMPILE, Tier.TESTS):
        assert _tier(trial, tier)[0] is Verdict.PASS, _tier(trial, tier)
    envelope = next(e for e in trial.envelopes if e.tier is Tier.TESTS)
    assert envelope.details["test_edits"] == [{"path": "notes/notes_test.go", "kind": "mechanical"}]


def test_the_same_rewrite_with_an_assertion_removed_fails_naming_the_hunk(
    live: LiveGrader, make_repo: RepoFactory
) -> None:
    repo = make_repo(TEST_ONLY)
    weakened = _rewritten_test().replace(ASSERTION, "\t_ = got\n")  # still compiles
    assert weakened != _rewritten_test()
    trial = live.grade(
        repo, diff_of(repo[0], {"notes/notes_test.go": weakened}), "go-import-rewrite"
    )
    verdict, reason = _tier(trial, Tier.TESTS)
    assert verdict is Verdict.FAIL
    assert reason == "the patch weakens the tests: func TestTitle was changed"
    [evidence] = _tests_evidence(trial)
    assert evidence.startswith("notes/notes_test.go:")
    assert '-if got != "Groceries" {' in evidence
    # Decided before any run of the suite.
    envelope = next(e for e in trial.envelopes if e.tier is Tier.TESTS)
    assert "patched" not in envelope.details


@pytest.mark.parametrize(
    ("old", "new", "reason"),
    [
        (
            '\ts := openTemp(t)\n\tif err := s.Put("greeting"',
            '\tt.Skip("flaky")\n\ts := openTemp(t)\n\tif err := s.Put("greeting"',
            "the patch weakens the tests: func TestPutThenGet was changed",
        ),
        ("package kv\n", "//go:build ignore\n\npackage kv\n", "build constraints changed"),
    ],
)
def test_go_tests_skipped_by_the_patch_fail(
    live: LiveGrader, tmp_path: Path, old: str, new: str, reason: str
) -> None:
    repo = clone_example(tmp_path, "go-ioutil")
    files = good_patch_files(repo[0], "go-ioutil")
    test_file = "kv/store_test.go"
    original = (repo[0] / test_file).read_text()
    assert old in original
    patch = diff_of(repo[0], {**files, test_file: original.replace(old, new, 1)})
    base = live.example("go-ioutil")
    trial = live.grade(base, patch, "go-import-rewrite")
    assert trial.verdict is Verdict.FAIL  # tier 1 refuses a dropped file before any build
    # With tier 1's check off, tier 3's own reading of the test edit still fails it.
    unguarded = without_integrity(live.specs, "go-import-rewrite", "build-constraints")
    verdict, found = _tier(live.grade(base, patch, "go-import-rewrite", unguarded), Tier.TESTS)
    assert verdict is Verdict.FAIL
    assert reason in found


def test_an_ignored_java_test_fails(live: LiveGrader, tmp_path: Path) -> None:
    repo = clone_example(tmp_path, "java-calc")
    files = good_patch_files(repo[0], "java-calc")
    test_file = "src/test/java/com/example/calc/CalculatorTest.java"
    original = (repo[0] / test_file).read_text()
    ignored = original.replace("    @Test\n", "    @Ignore\n    @Test\n", 1)
    ignored = ignored.replace(
        "import org.junit.Test;", "import org.junit.Ignore;\nimport org.junit.Test;"
    )
    assert ignored != original
    patch = diff_of(repo[0], {**files, test_file: ignored})
    trial = live.grade(live.example("java-calc"), patch, "java8-to-17")
    verdict, reason = _tier(trial, Tier.TESTS)
    assert verdict is Verdict.FAIL
    assert reason.startswith("the patch weakens the tests: CalculatorTest#"), reason
    assert "+@Ignore" in _tests_evidence(trial)[0]
