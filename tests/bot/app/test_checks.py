"""Check-run rendering: limits, annotation batches, warnings, the repository config."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import pytest

from migration_evals.bot.app.checks import (
    ANNOTATION_BATCH,
    MAX_TEXT,
    TITLE_LIMIT,
    Action,
    Conclusion,
    Mode,
    actions,
    annotation_batches,
    cut,
    short_title,
    trial_output,
)
from migration_evals.bot.app.pulls import filter_diff
from migration_evals.bot.app.repo_config import RepoConfigError, parse_repo_config
from migration_evals.core.model import (
    Changeset,
    Envelope,
    Evidence,
    FabricatedMark,
    Stamps,
    Tier,
    Trial,
    Verdict,
)
from migration_evals.core.specs import SpecSet
from tests.bot.app.conftest import render_markdown

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


def test_a_spec_without_a_judge_says_no_judge_on_the_check_run() -> None:
    three = tuple(
        Envelope("t", "c", tier, Verdict.PASS, 0.01, 0.0, 0.1, STAMPS)
        for tier in (Tier.APPLY, Tier.COMPILE, Tier.TESTS)
    )
    trial = replace(_trial(Verdict.PASS), envelopes=three)
    output = trial_output(trial, Mode.STANDARD, judged=False)
    assert output.conclusion is Conclusion.SUCCESS
    assert output.title == "pass: all 3 tiers passed, no judge"
    assert "(no judge), trial" in output.summary and "standard judging" not in output.summary
    assert "> no judge: the oracle spec pre-registers an evaluation" in output.summary
    assert "standard judging" in trial_output(trial, Mode.STANDARD).summary


def test_a_broken_anchor_is_neutral_and_shown() -> None:
    output = trial_output(_trial(Verdict.PASS), Mode.STANDARD, broken_anchor="phi 0.1 < 0.3")
    assert output.conclusion is Conclusion.NEUTRAL
    assert "phi 0.1 &lt; 0.3" in render_markdown(output.summary)


def _stopped(tier: Tier, *, fabricated: bool = False) -> Trial:
    """A trial whose tiers pass up to ``tier``, which fails."""
    changeset = _trial(Verdict.PASS).changeset
    tiers = list(Tier)[: list(Tier).index(tier) + 1]
    marks = (FabricatedMark("sandbox", "k", "c.json", "no recording"),) if fabricated else ()
    envelopes = tuple(
        Envelope(
            "t", changeset.id, t, Verdict.FAIL if t is tier else Verdict.PASS, 0.0, 0.0, 0.1,
            STAMPS, "why", (), marks if t is tier else (),
        )
        for t in tiers
    )  # fmt: skip
    return Trial("t", "r", changeset, envelopes)


@pytest.mark.parametrize("tier", [Tier.APPLY, Tier.COMPILE, Tier.TESTS])
def test_a_patch_that_does_not_apply_build_or_pass_tests_fails_its_check_unanchored(
    tier: Tier,
) -> None:
    """Tiers 1-3 are facts: no gold anchor is needed to believe them."""
    output = trial_output(_stopped(tier), Mode.STANDARD, broken_anchor="too few labels")
    assert output.conclusion is Conclusion.FAILURE
    assert "so this check fails all the same" in output.summary
    assert "- **Gold anchor:** not anchored (too few labels). No number from this evaluation " \
        "is publishable until the publication gate says so (`migration-evals gate check`)." \
        in output.summary  # fmt: skip


def test_a_judges_fail_or_a_fabricated_fact_waits_for_the_anchor() -> None:
    judged = trial_output(_stopped(Tier.JUDGE), Mode.STANDARD, broken_anchor="too few labels")
    assert judged.conclusion is Conclusion.NEUTRAL
    assert "The conclusion is neutral." in judged.summary
    assert trial_output(_stopped(Tier.JUDGE), Mode.STANDARD).conclusion is Conclusion.FAILURE
    made_up = trial_output(_stopped(Tier.COMPILE, fabricated=True), Mode.STANDARD)
    assert made_up.conclusion is Conclusion.NEUTRAL  # a cassette miss is no fact


def test_an_anchored_check_still_says_the_gate_decides() -> None:
    output = trial_output(_trial(Verdict.PASS), Mode.STANDARD)
    assert output.conclusion is Conclusion.SUCCESS
    assert "- **Gold anchor:** anchored. No number from this evaluation is publishable until " \
        "the publication gate says so" in output.summary  # fmt: skip


def test_actions_fit_githubs_limits_and_leave_re_running_to_github() -> None:
    for action in actions():
        assert len(action["label"]) <= 20 and len(action["identifier"]) <= 20
        assert len(action["description"]) <= 40
    assert [a["identifier"] for a in actions()] == [Action.STRICT]


def _compile_failure() -> Trial:
    changeset = Changeset(
        "o/r/pull/1@abc", "repo", "0" * 40, "", "java8-to-17", "gpt-5", date(2020, 1, 1)
    )
    applied = Envelope("t1", changeset.id, Tier.APPLY, Verdict.PASS, 0.001, 0.0, 0.1, STAMPS, "ok")
    errors = (
        Evidence("cannot find symbol <T> `x` | y", "src/A.java", 3, 5),
        Evidence("';' expected", "src/B.java", 9),
    )
    compiled = Envelope(
        "t1", changeset.id, Tier.COMPILE, Verdict.FAIL, 0.01, 0.002, 12.5, STAMPS,
        "javac reported 2 errors", errors,
    )  # fmt: skip
    return Trial("t1", "r", changeset, (applied, compiled))


_EXPECTED_HTML = """\
<blockquote>
<p>⚠️ <strong>This eval is broken:</strong> phi 0.1 &lt; floor 0.3. The patch fails a tier \
whose verdict is a fact (it does not apply, build or pass its tests), so this check fails all the \
same; any other verdict concludes neutral.</p>
</blockquote>
<p><strong>fail</strong> for <code>java8-to-17</code> by <code>gpt-5</code> (standard judging), \
trial <code>t1</code>.</p>
<table>
<thead>
<tr>
<th>tier</th>
<th>verdict</th>
<th style="text-align:right">cost (list)</th>
<th style="text-align:right">cost (actual)</th>
<th style="text-align:right">duration</th>
<th style="text-align:center">cached</th>
</tr>
</thead>
<tbody>
<tr>
<td>apply</td>
<td>pass</td>
<td style="text-align:right">$0.0010</td>
<td style="text-align:right">$0.0000</td>
<td style="text-align:right">0.10s</td>
<td style="text-align:center"></td>
</tr>
<tr>
<td>compile</td>
<td>fail</td>
<td style="text-align:right">$0.0100</td>
<td style="text-align:right">$0.0020</td>
<td style="text-align:right">12.50s</td>
<td style="text-align:center"></td>
</tr>
</tbody>
</table>
<ul>
<li><strong>Total cost:</strong> $0.0110 list, $0.0020 actual</li>
<li><strong>Stamps:</strong> oracle <code>aaaaaaaaaaaa</code>, recipe <code>bbbbbbbbbbbb</code>, \
hypotheses <code>cccccccccccc</code></li>
<li><strong>Ledger head:</strong> not signed (no checkpoint key, or the ledger did not verify)</li>
<li><strong>Gold anchor:</strong> not anchored (phi 0.1 &lt; floor 0.3). No number from this \
evaluation is publishable until the publication gate says so \
(<code>migration-evals gate check</code>).</li>
</ul>
<h3>Stopped at compile: fail</h3>
<p>javac reported 2 errors</p>
<pre><code class="language-text">src/A.java:3:5: cannot find symbol &lt;T&gt; `x` | y
src/B.java:9: ';' expected
</code></pre>
<hr />
"""


def test_the_summary_renders_as_github_shows_it() -> None:
    """Banner, verdict, table, costs and the compiler's first errors, each its own block."""
    output = trial_output(
        _compile_failure(), Mode.STANDARD, broken_anchor="phi 0.1 < floor 0.3", app_slug="me-bot"
    )
    html = render_markdown(output.summary)
    body, commands = html.split("<hr />\n")
    assert body + "<hr />\n" == _EXPECTED_HTML
    assert "<li><code>/migration-evals rerun</code>: grade the PR" in commands
    assert "<code>@me-bot &lt;command&gt;</code> works too" in commands
    assert output.title == "fail at compile: javac reported 2 errors"


def test_candidate_text_renders_inert() -> None:
    """Markup in a reason (from the candidate's build) shows as written, in text and summary."""
    trial = _trial(Verdict.FAIL, evidence=1)
    hostile = "<img src=x onerror=alert(1)> [link](http://x) | **bold**"
    trial = Trial("t", "r", trial.changeset, (replace(trial.envelopes[0], reason=hostile),))
    output = trial_output(trial, Mode.STANDARD)
    for html in (render_markdown(output.summary), render_markdown(output.text)):
        assert "<img" not in html and "<a " not in html and "<strong>bold" not in html
        assert "&lt;img src=x onerror=alert(1)&gt; [link](http://x) | **bold**" in html


def test_titles_are_cut_after_a_word() -> None:
    long = "javac reported " + "unresolvable-symbol " * 10
    title = short_title(f"fail at compile: {long}")
    assert len(title) <= TITLE_LIMIT and title.endswith("unresolvable-symbol…")
    assert short_title("x" * 200).endswith("…") and len(short_title("x" * 200)) == TITLE_LIMIT
    assert short_title("one\nline  only") == "one line only"


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


def _graded(diff_coverage: dict[str, object] | None) -> Trial:
    """A pass through tier 3, whose details hold ``diff_coverage`` if given."""
    changeset = Changeset(
        "o/r/pull/1@abc", "repo", "0" * 40, "", "java8-to-17", "gpt-5", date(2020, 1, 1)
    )
    details = {"diff_coverage": diff_coverage} if diff_coverage is not None else {}
    envelopes = tuple(
        Envelope(f"t{i}", changeset.id, tier, Verdict.PASS, 0.0, 0.0, 0.1, STAMPS, "ok",
                 details=details if tier is Tier.TESTS else {})
        for i, tier in enumerate((Tier.APPLY, Tier.COMPILE, Tier.TESTS))
    )  # fmt: skip
    return Trial("t", "r", changeset, envelopes)


def test_the_summary_says_what_the_tests_executed_of_the_changed_code() -> None:
    files = [{"path": "src/A.java", "changed": 4, "covered": 0, "uncovered_lines": [3]}]
    untested = trial_output(
        _graded({"changed": 4, "covered": 0, "files": files}), Mode.STANDARD
    ).summary
    assert (
        "- ⚠️ **Diff coverage:** untested change: the base's tests execute none of the 4 "
        "changed lines of main code\n"
    ) in untested
    executed = trial_output(_graded({"changed": 4, "covered": 3, "files": files}), Mode.STANDARD)
    assert (
        "- **Diff coverage:** the base's tests execute 3 of the 4 changed lines of main code "
        "(75%)\n" in executed.summary
    )
    # The line renders in the summary's list, not as a block of its own.
    assert "<li>⚠️ <strong>Diff coverage:</strong> untested change" in render_markdown(untested)
    assert "Diff coverage" not in trial_output(_graded(None), Mode.STANDARD).summary
