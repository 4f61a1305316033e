"""Check-run rendering: limits, annotation batches, warnings, the repository config."""

from __future__ import annotations

from datetime import date

import pytest

from bot.app.checks import (
    ANNOTATION_BATCH,
    MAX_TEXT,
    Conclusion,
    Mode,
    actions,
    annotation_batches,
    cut,
    trial_output,
)
from bot.app.pulls import filter_diff
from bot.app.repo_config import RepoConfigError, parse_repo_config
from core.model import Changeset, Envelope, Evidence, FabricatedMark, Stamps, Tier, Trial, Verdict
from core.specs import SpecSet

STAMPS = Stamps("a" * 64, "b" * 64, "c" * 64)


def _trial(verdict: Verdict, evidence: int = 0, fabricated: bool = False) -> Trial:
    changeset = Changeset(
        "o/r/pull/1@abc", "repo", "0" * 40, "", "java8-to-17", "gpt-5", date(2020, 1, 1)
    )
    marks = (FabricatedMark("judge", "k", "c.json", "no recording"),) if fabricated else ()
    notes = tuple(Evidence(f"error {i}", "src/A.java", i + 1, 2) for i in range(evidence))
    first = Envelope(
        "t", changeset.id, Tier.APPLY, verdict, 0.001, 0.0, 0.1, STAMPS, "why", notes, marks
    )
    return Trial("t", "r", changeset, (first,))


def test_cut_keeps_githubs_limit_and_says_so() -> None:
    text = cut("x" * (MAX_TEXT + 10))
    assert len(text) == MAX_TEXT and "Cut to GitHub's 65,535-character limit" in text
    assert cut("short") == "short"


def test_annotations_go_in_batches_of_at_most_fifty() -> None:
    output = trial_output(_trial(Verdict.FAIL, evidence=120), Mode.STANDARD)
    batches = annotation_batches(output.annotations)
    assert [len(b) for b in batches] == [50, 50, 20] and ANNOTATION_BATCH == 50
    assert output.conclusion is Conclusion.FAILURE


def test_fabricated_results_are_neutral_with_a_visible_warning() -> None:
    output = trial_output(_trial(Verdict.PASS, fabricated=True), Mode.STANDARD)
    assert output.conclusion is Conclusion.NEUTRAL
    assert "Fabricated, unpublishable" in output.summary


def test_a_broken_anchor_is_neutral_and_shown() -> None:
    output = trial_output(_trial(Verdict.PASS), Mode.STANDARD, broken_anchor="phi 0.1 < 0.3")
    assert output.conclusion is Conclusion.NEUTRAL and "phi 0.1 < 0.3" in output.summary


def test_actions_fit_githubs_limits() -> None:
    for action in actions():
        assert len(action["label"]) <= 20 and len(action["identifier"]) <= 20
        assert len(action["description"]) <= 40


def test_repo_config_errors_are_all_listed(specs: SpecSet) -> None:
    text = "agents:\n  - author: bot\n    model: nope\nrecipes:\n  - recipe: nope\n    label: x\n"
    with pytest.raises(RepoConfigError) as caught:
        parse_repo_config(text, specs)
    assert len(caught.value.problems) == 2
    assert "agents[0].model: 'nope' is not a known model" in caught.value.problems[0]
    with pytest.raises(RepoConfigError, match="label, branch_prefix, title_contains"):
        parse_repo_config("recipes:\n  - recipe: java8-to-17\n", specs)
    with pytest.raises(RepoConfigError, match="duplicate key"):
        parse_repo_config("strict: true\nstrict: false\n", specs)


def test_repo_config_maps_by_label_branch_or_title(specs: SpecSet) -> None:
    config = parse_repo_config(
        "agents: [{author: Bot, model: gpt-5}]\nstrict: true\nskip_paths: ['vendor/*']\n"
        "recipes:\n  - {recipe: go-import-rewrite, branch_prefix: agent/go-}\n"
        "  - {recipe: java8-to-17, title_contains: java 17}\n",
        specs,
    )
    assert config.agent("bot") is not None and config.strict
    assert config.recipe_for([], "agent/go-x", "t").recipe == "go-import-rewrite"  # type: ignore[union-attr]
    assert config.recipe_for([], "main", "Move to Java 17").recipe == "java8-to-17"  # type: ignore[union-attr]
    assert config.recipe_for([], "main", "other") is None
    assert config.skips("vendor/a.go") and not config.skips("src/a.go")


def test_filter_diff_drops_skipped_files() -> None:
    diff = (
        "diff --git a/vendor/x.go b/vendor/x.go\n--- a/vendor/x.go\n+++ b/vendor/x.go\n"
        "@@ -1 +1 @@\n-a\n+b\n"
        "diff --git a/main.go b/main.go\n--- a/main.go\n+++ b/main.go\n@@ -1 +1 @@\n-a\n+b\n"
    )
    kept = filter_diff(diff, lambda p: p.startswith("vendor/"))
    assert kept.startswith("diff --git a/main.go") and "vendor" not in kept


VENDORED = (
    "diff --git a/vendor/x.go b/vendor/x.go\n--- a/vendor/x.go\n+++ b/vendor/x.go\n"
    "@@ -1 +1 @@\n-a\n+b\n"
)


def _vendor(path: str) -> bool:
    return path.startswith("vendor/")


def test_a_rename_across_the_skip_boundary_is_kept_either_way() -> None:
    into = (
        "diff --git a/src/test/CalcTest.java b/vendor/CalcTest.java\nsimilarity index 100%\n"
        "rename from src/test/CalcTest.java\nrename to vendor/CalcTest.java\n"
    )
    out_of = (
        "diff --git a/vendor/lib.go b/lib.go\nsimilarity index 90%\n"
        "rename from vendor/lib.go\nrename to lib.go\n--- a/vendor/lib.go\n+++ b/lib.go\n"
        "@@ -1 +1 @@\n-a\n+b\n"
    )
    kept = filter_diff(VENDORED + into + out_of, _vendor)
    assert kept == into + out_of  # both renames stay to be graded; the vendored edit goes


def test_a_quoted_path_after_a_skipped_section_is_kept() -> None:
    quoted = (
        'diff --git "a/src/t\\303\\251st.go" "b/src/t\\303\\251st.go"\n'
        '--- "a/src/t\\303\\251st.go"\n+++ "b/src/t\\303\\251st.go"\n@@ -1 +1 @@\n-a\n+b\n'
    )
    quoted_vendor = (
        'diff --git "a/vendor/t\\303\\251.go" "b/vendor/t\\303\\251.go"\n'
        '--- "a/vendor/t\\303\\251.go"\n+++ "b/vendor/t\\303\\251.go"\n@@ -1 +1 @@\n-a\n+b\n'
    )
    assert filter_diff(VENDORED + quoted + quoted_vendor, _vendor) == quoted


def test_an_added_or_deleted_file_is_judged_by_its_one_path_and_a_corrupt_diff_left_whole() -> None:
    added = (
        "diff --git a/vendor/n.go b/vendor/n.go\nnew file mode 100644\n"
        "--- /dev/null\n+++ b/vendor/n.go\n@@ -0,0 +1 @@\n+x\n"
    )
    assert filter_diff("From abc\n\n" + added, _vendor) == "From abc\n\n"
    corrupt = VENDORED.replace("@@ -1 +1 @@", "@@ -1,5 +1 @@")
    assert filter_diff(corrupt, _vendor) == corrupt
