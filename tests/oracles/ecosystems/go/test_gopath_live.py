"""A GOPATH-era Go tree (no go.mod) graded on a real engine: the harness makes its go.mod
at the base commit through the registry gate (the Go module proxy) and builds and tests
both trees with it."""

from __future__ import annotations

import pytest

from migration_evals.core.model import Tier, Verdict
from tests.conftest import LiveGrader, RepoFactory, diff_of

pytestmark = pytest.mark.docker

_MAIN = """package main

import (
	"fmt"

	"github.com/acme/tiny/greet"
)

func main() {
	fmt.Println(greet.Hello("gopher"))
}
"""
_GREET = """package greet

import (
	"errors"

	pkgerrors "github.com/pkg/errors"
)

var errNoName = errors.New("no name")

// Hello greets name.
func Hello(name string) string {
	return "hello, " + name
}

// Check says whether name can be greeted.
func Check(name string) error {
	if name == "" {
		return pkgerrors.Wrap(errNoName, "check")
	}
	return nil
}
"""
_GREET_TEST = """package greet

import (
	"errors"
	"testing"
)

func TestHello(t *testing.T) {
	if got := Hello("gopher"); got != "hello, gopher" {
		t.Fatalf("Hello: %q", got)
	}
}

func TestCheck(t *testing.T) {
	err := Check("")
	if err == nil || err.Error() != "check: no name" || !errors.Is(err, errNoName) {
		t.Fatalf("Check: %v", err)
	}
	if Check("gopher") != nil {
		t.Fatal("Check refused a name")
	}
}
"""


def test_a_gopath_tree_is_graded_with_the_go_mod_the_harness_made(
    live: LiveGrader, make_repo: RepoFactory
) -> None:
    files = {"main.go": _MAIN, "greet/greet.go": _GREET, "greet/greet_test.go": _GREET_TEST}
    repo = make_repo(files)
    rewritten = _GREET.replace('\n\tpkgerrors "github.com/pkg/errors"\n', "").replace(
        'pkgerrors.Wrap(errNoName, "check")', 'fmt.Errorf("check: %w", errNoName)'
    )
    rewritten = rewritten.replace('"errors"\n', '"errors"\n\t"fmt"\n', 1)
    patch = diff_of(repo[0], {"greet/greet.go": rewritten})
    trial = live.grade(repo, patch, "go-import-rewrite")
    verdicts = [(e.tier, e.verdict, e.reason) for e in trial.envelopes if e.tier is not Tier.JUDGE]
    assert [v for _, v, _ in verdicts] == [Verdict.PASS] * 3, verdicts
    compiled = trial.envelopes[1].details
    made = compiled["synthesized"]["."]
    assert made["module"] == "github.com/acme/tiny"
    assert "module github.com/acme/tiny" in made["go_mod"]
    assert "github.com/pkg/errors v0.9.1" in made["go_mod"]
    assert {entry["status"] for entry in compiled["dependencies"]} == {"resolved"}
    assert "2 of 2 tests pass" in trial.envelopes[2].reason


_GOPKG_LOCK = """[[projects]]
  name = "github.com/pkg/errors"
  packages = ["."]
  revision = "645ef00459ed84a119197bfb8d8205042c6df63d"
  version = "v0.8.0"

[solve-meta]
  analyzer-name = "dep"
  analyzer-version = 1
  solver-name = "gps-cdcl"
  solver-version = 1
"""


def test_a_gopath_tree_pinned_by_dep_builds_with_the_versions_its_lock_names(
    live: LiveGrader, make_repo: RepoFactory
) -> None:
    files = {
        "main.go": _MAIN,
        "greet/greet.go": _GREET,
        "greet/greet_test.go": _GREET_TEST,
        "Gopkg.lock": _GOPKG_LOCK,
    }
    repo = make_repo(files)
    rewritten = _GREET.replace('\n\tpkgerrors "github.com/pkg/errors"\n', "").replace(
        'pkgerrors.Wrap(errNoName, "check")', 'fmt.Errorf("check: %w", errNoName)'
    )
    rewritten = rewritten.replace('"errors"\n', '"errors"\n\t"fmt"\n', 1)
    trial = live.grade(repo, diff_of(repo[0], {"greet/greet.go": rewritten}), "go-import-rewrite")
    made = trial.envelopes[1].details["synthesized"]["."]
    # Not today's v0.9.1: the release dep locked, whose Wrap cannot be unwrapped yet.
    assert "github.com/pkg/errors v0.8.0" in made["go_mod"], made["go_mod"]
    verdicts = [(e.tier, e.verdict, e.reason) for e in trial.envelopes if e.tier is not Tier.JUDGE]
    assert [v for _, v, _ in verdicts] == [Verdict.PASS] * 3, verdicts
    # TestCheck's errors.Is fails at the base with that release: left out, and listed.
    tested = trial.envelopes[2]
    assert any("TestCheck" in e.message and "left out" in e.message for e in tested.evidence)
