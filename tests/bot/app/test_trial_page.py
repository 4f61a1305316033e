"""The trial page the check run links to: the ``show`` detail, escaped, whole ids only."""

from __future__ import annotations

from pathlib import Path

from bot.app.trial_page import TrialPages
from core.model import Tier
from core.specs import SpecSet
from core.store import Store
from tests.gate.ledgers import Plan, append

HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def test_the_page_escapes_what_came_from_the_candidate(tmp_path: Path, specs: SpecSet) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 'results.db'}")
    store.start_run("run-1", {"mode": "replay"})
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
