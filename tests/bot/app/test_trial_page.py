"""The trial page the check run links to: the ``show`` detail, escaped, whole ids only."""

from __future__ import annotations

from pathlib import Path

from migration_evals.bot.app.trial_page import TrialPages
from migration_evals.core.model import Tier
from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from tests.gate.ledgers import Plan, append

HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def test_the_page_escapes_what_came_from_the_candidate(tmp_path: Path, specs: SpecSet) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 'results.db'}")
    store.runs.start_run("run-1", {"mode": "replay"})
    plan = Plan(
        f"c/{HOSTILE}", outcome="fail@compile", details={Tier.COMPILE: {"output_tail": HOSTILE}}
    )
    [trial] = append(store, specs, [plan])
    pages = TrialPages(store, specs)
    html = pages(trial.id)
    assert html is not None
    assert "<script" not in html and "<img" not in html
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html
    assert "<td>compile</td><td>fail</td>" in html
    assert pages(trial.id[:6]) is None  # prefixes and changeset ids are for ``show`` only
    assert pages(plan.changeset_id) is None and pages("nope") is None
    store.close()


def test_the_page_says_what_the_tests_executed_of_the_changed_code(
    tmp_path: Path, specs: SpecSet
) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 'results.db'}")
    store.runs.start_run("run-1", {"mode": "replay"})
    files = [{"path": f"src/{HOSTILE}.java", "changed": 2, "covered": 0, "uncovered_lines": [7]}]
    found = {"diff_coverage": {"changed": 2, "covered": 0, "files": files}}
    [untested, older] = append(
        store, specs, [Plan("c/untested", details={Tier.TESTS: found}), Plan("c/older")]
    )
    pages = TrialPages(store, specs)
    html = pages(untested.id) or ""
    assert (
        "<tr><th>diff coverage</th><td>untested change: the base&#x27;s tests execute none of "
        "the 2 changed lines of main code</td></tr>"
    ) in html
    assert "<img" not in html and "<code>src/&lt;script&gt;" in html  # the file, listed
    assert "<th>diff coverage</th>" not in (pages(older.id) or "")
    store.close()
