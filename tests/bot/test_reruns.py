"""Honest re-runs: after the demo runs twice, what the report, ``run``'s own summary and
``show`` say describes what the counted results rest on (the hand-made judge answers,
what everything cost when it was made) beside what the second run paid (nothing), and
the modes the run stored; and the demo asks only for the images its examples can use."""

from __future__ import annotations

import io
import json
import re
import shutil
from collections.abc import Iterator
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from migration_evals.bot.cli import main
from migration_evals.bot.commands.demo import EXAMPLES, _needed, load_examples
from migration_evals.core.specs import SpecSet
from migration_evals.oracles.tiers.sandboxed import recipe_images
from tests.bot.conftest import DemoRun, use_folder


def _demo() -> dict:  # type: ignore[type-arg]
    out = io.StringIO()
    with redirect_stdout(out):
        main(["demo", "--json"])
    document: dict = json.loads(out.getvalue())  # type: ignore[type-arg]
    return document


@pytest.fixture(scope="module")
def rerun(
    graded_demo: DemoRun, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[dict, dict]]:  # type: ignore[type-arg]
    """The demo run twice in one folder (``env``'s settings): a copy of the folder of the
    demo graded once per worker, where it runs again. Every test of this module then reads
    both runs and runs its own read-only commands in that folder: none of them changes
    what the runs wrote."""
    folder = tmp_path_factory.mktemp("rerun")
    shutil.copytree(graded_demo.folder, folder, dirs_exist_ok=True)
    with pytest.MonkeyPatch.context() as patch:
        use_folder(folder, patch)
        yield graded_demo.document(), _demo()


def test_the_second_run_says_what_its_reused_envelopes_cost_when_made(
    rerun: tuple[dict, dict],  # type: ignore[type-arg]
) -> None:
    first, second = rerun
    reused = second["reused"]
    assert reused["envelopes"] > first["reused"]["envelopes"]
    assert second["cost_usd"] < 0.1  # it paid (nearly) nothing: only the errors ran again
    # What it rests on cost what the first run's envelopes cost when they were made
    # (those it paid for, and those it reused itself: the demo's copies of one patch for
    # each model), but the errors, which are never reused.
    made = first["cost_usd"] + first["reused"]["list_cost_usd_when_made"]
    assert reused["list_cost_usd_when_made"] == pytest.approx(made - second["cost_usd"], abs=1e-6)


@pytest.mark.usefixtures("plots_not_drawn")
def test_the_report_after_a_rerun_rests_on_the_first_runs_sources(
    rerun: tuple[dict, dict],  # type: ignore[type-arg]
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, second = rerun
    assert main(["report", "--out", "out", "--json"]) == 0
    provenance = json.loads(capsys.readouterr().out)["provenance"]
    judged = sum(
        1
        for t in second["trials"]
        for x in t["tiers"]
        if x["tier"] == "judge" and x["verdict"] != "skipped"
    )
    # Every judge answer is the bundled hand-written one, reused: still hand-made.
    assert provenance["by_tier"]["judge"]["hand-made"] == judged > 0
    assert provenance["reused"]["hand-made"] == judged
    assert "cached" not in provenance["envelopes"]
    assert "hand-made" in provenance["mixed"]
    assert provenance["unmeasured_inference_usd"] > 0  # "no judge was asked" survives
    assert provenance["reused_cost"]["list_usd"] == pytest.approx(
        second["reused"]["list_cost_usd_when_made"]
    )
    assert provenance["runs"] == {second["run_id"]: "judge replay, sandbox replay"}
    page = Path("out/report.md").read_text()
    assert re.search(r"\| hand-made \| \d+ \| [\d.]+% \| \d+ \|", page)
    assert re.search(
        r"not measured \(hand-made or fabricated answers: no model was asked\) \$0\.\d*[1-9]", page
    )


def test_show_prints_the_modes_the_run_stored(
    rerun: tuple[dict, dict],  # type: ignore[type-arg]
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, second = rerun
    trial = next(t for t in second["trials"] if t["verdict"] == "pass")
    assert main(["show", trial["trial_id"]]) == 0
    out = capsys.readouterr().out
    assert "modes unknown" not in out
    assert "github replay, judge replay, sandbox replay, strict False" in out
    assert re.search(r"reused envelope\(s\) cost list \$0\.\d{4}, actual \$0\.\d{4} when made", out)


def test_the_demo_asks_only_for_images_an_example_that_applies_can_use(specs: SpecSet) -> None:
    examples = load_examples(EXAMPLES)
    named = {
        i for x in examples for i in recipe_images(specs.recipe(x.changeset.recipe), x.changeset)
    }
    needed = {i for x in examples for i in _needed(specs, x)}
    # The stale Dockerfile patch removes a FROM line its base never had: it cannot apply.
    assert "debian:10-slim" in named - needed
    stale = next(x for x in examples if x.changeset.id == "docker-web/no-apply")
    assert "debian:10-slim" not in _needed(specs, stale)
    # A patch that applies needs what its rewrites name, before and after.
    good = next(x for x in examples if x.changeset.id == "docker-web/good")
    assert {"debian:11-slim", "debian:12-slim"} <= set(_needed(specs, good))
