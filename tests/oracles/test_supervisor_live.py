"""Go test binaries run under the harness's supervisor, live: a binary that re-runs itself
to forge its results is caught by tier 3 alone, and a test that re-runs its own binary as
a helper process, as at the base commit, is not held against the patch."""

from __future__ import annotations

from pathlib import Path

import pytest

from migration_evals.core.model import Tier, Verdict
from migration_evals.oracles.tiers.apply import ApplyOracle
from migration_evals.oracles.tiers.base import TierOutcome, TrialContext
from tests.conftest import (
    LiveGrader,
    RepoFactory,
    broken_get,
    clone_example,
    diff_of,
    good_patch_files,
)
from tests.oracles.test_tiers_live import _tier

pytestmark = pytest.mark.docker


class TrustingApply(ApplyOracle):
    """Tier 1 that applies the patch and checks nothing else: the recipe's contract would
    refuse the attack's init function before any test ran."""

    def evaluate(self, context: TrialContext) -> TierOutcome:
        applied = context.workspace.apply()
        assert applied.ok, applied.problems
        return TierOutcome.passed("applied; nothing checked")


# Non-test code whose init runs the test binary again as a child, rewrites every failure
# in the child's output into a pass, marks its own lines covered in the coverage profile
# and exits 0: the events, go's lines, the exit status and the profile all agree.
REEXEC_INIT = """package kv

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
)

func init() {
	if os.Getenv("KV_CHILD") != "" {
		return
	}
	child := exec.Command(os.Args[0], os.Args[1:]...)
	child.Env = append(os.Environ(), "KV_CHILD=1")
	out, _ := child.CombinedOutput()
	out = bytes.ReplaceAll(out, []byte("--- FAIL"), []byte("--- PASS"))
	out = bytes.ReplaceAll(out, []byte("\\x16--- FAIL"), []byte("\\x16--- PASS"))
	out = bytes.ReplaceAll(out, []byte("FAIL"), []byte("PASS"))
	os.Stdout.Write(out)
	for _, arg := range os.Args {
		if path, ok := strings.CutPrefix(arg, "-test.coverprofile="); ok {
			profile, _ := os.ReadFile(path)
			os.WriteFile(path, bytes.ReplaceAll(profile, []byte(" 0\\n"), []byte(" 1\\n")), 0o644)
		}
	}
	os.Exit(0)
}
"""


def test_a_test_binary_that_re_runs_itself_to_forge_its_results_fails_in_tier_3(
    live: LiveGrader, tmp_path: Path
) -> None:
    repo = clone_example(tmp_path, "go-ioutil")
    files = good_patch_files(repo[0], "go-ioutil")
    changes = {**files, "kv/store.go": broken_get(files), "kv/zz_init.go": REEXEC_INIT}
    base = live.example("go-ioutil")  # the module's clone; the patch is written in repo
    trial = live.grade(base, diff_of(repo[0], changes), "go-import-rewrite", apply=TrustingApply())
    assert _tier(trial, Tier.COMPILE)[0] is Verdict.PASS
    verdict, reason = _tier(trial, Tier.TESTS)
    assert verdict is Verdict.FAIL, reason
    assert "executed itself again" in reason and "(0 at the base commit)" in reason, reason


HELPER_PROCESS = {
    "go.mod": "module example.com/helper\n\ngo 1.19\n",
    "greet/greet.go": """package greet

import "io/ioutil"

// Read returns the greeting stored at path.
func Read(path string) (string, error) {
	data, err := ioutil.ReadFile(path)
	return string(data), err
}
""",
    "greet/greet_test.go": """package greet

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Runs its own binary again as a helper process, as many real Go suites do.
func TestReadInAHelperProcess(t *testing.T) {
	if os.Getenv("GREET_HELPER") != "" {
		got, err := Read(os.Getenv("GREET_FILE"))
		if err != nil || got != "hello" {
			os.Exit(3)
		}
		return
	}
	path := filepath.Join(t.TempDir(), "greeting")
	if err := os.WriteFile(path, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	helper := exec.Command(os.Args[0], "-test.run=TestReadInAHelperProcess")
	helper.Env = append(os.Environ(), "GREET_HELPER=1", "GREET_FILE="+path)
	if out, err := helper.CombinedOutput(); err != nil {
		t.Fatalf("helper: %v: %s", err, out)
	}
}
""",
}


def test_a_helper_process_test_the_base_also_runs_is_not_held_against_the_patch(
    live: LiveGrader, make_repo: RepoFactory
) -> None:
    repo = make_repo(HELPER_PROCESS)
    rewritten = (
        HELPER_PROCESS["greet/greet.go"]
        .replace('"io/ioutil"', '"os"')
        .replace("ioutil.ReadFile", "os.ReadFile")
    )
    trial = live.grade(repo, diff_of(repo[0], {"greet/greet.go": rewritten}), "go-import-rewrite")
    for tier in (Tier.APPLY, Tier.COMPILE, Tier.TESTS):
        assert _tier(trial, tier)[0] is Verdict.PASS, _tier(trial, tier)
