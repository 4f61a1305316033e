"""End to end through the fake GitHub: real payloads in, check runs out."""

from __future__ import annotations

import copy
import dataclasses
import json
import threading
import time
from collections.abc import Callable
from html import escape
from urllib.parse import parse_qs, urlsplit

import pytest

from migration_evals.bot.app.grading import REPLAY_NOTE
from migration_evals.bot.app.links import TrialLinks
from migration_evals.bot.cascades import Cascades
from migration_evals.bot.plan import RunPlan
from migration_evals.miners.tracking import tracked_prs
from migration_evals.oracles.cascade import Cascade
from tests.bot.app.conftest import (
    CONFIG,
    INSTALLATION,
    JAVA_BASE,
    PATCHES,
    REPO,
    SECRET,
    Harness,
    payload,
    pull_data,
    raw,
    with_head,
)
from tests.core.test_yamlio import BILLION_LAUGHS
from tests.fake_github import FakePull


def test_pr_opened_gives_one_check_run_in_progress_then_success(harness: Harness) -> None:
    response = harness.deliver("pull_request", raw("pull_request/opened.payload.json"))
    assert response.status_code == 202
    assert harness.drain() == 1
    gh = harness.github
    assert gh.schema_errors == []
    runs = gh.runs_for(gh.pulls[("Codertocat/Hello-World", 2)].head_sha)
    assert len(runs) == 1
    run = runs[0]
    create = gh.writes("POST", "/check-runs")
    assert len(create) == 1 and create[0].body["status"] == "in_progress"
    assert run["status"] == "completed" and run["conclusion"] == "success", run["output"]
    assert "| apply | pass" in run["output"]["summary"]
    assert [a["identifier"] for a in run["actions"]] == ["strict"]  # Re-run is GitHub's own
    assert "details_url" not in run  # the App was given no public URL


def test_the_details_link_opens_the_trials_page_on_the_app(
    make_harness: Callable[..., Harness],
) -> None:
    harness = make_harness(public_url="https://evals.example.com")
    harness.deliver("pull_request", raw("pull_request/opened.payload.json"))
    harness.drain()
    [run] = harness.github.check_runs
    [record] = harness.service.ctx.records.for_pull(REPO, 2)
    assert record.trial_id and harness.github.schema_errors == []
    link = urlsplit(run["details_url"])
    assert f"{link.scheme}://{link.netloc}{link.path}" == (
        f"https://evals.example.com/trials/{record.trial_id}"
    )
    [signature] = parse_qs(link.query)["sig"]
    page = harness.client.get(f"{link.path}?{link.query}")
    assert page.status_code == 200 and page.mimetype == "text/html"
    assert page.headers["Content-Security-Policy"].startswith("default-src 'none'")
    html = page.get_data(as_text=True)
    assert f"<code>{record.trial_id}</code>" in html and "<td>judge</td><td>pass</td>" in html
    assert '<h3 id="judge">judge: <span class="pass">pass</span></h3>' in html
    assert "<script" not in html and '"envelope"' not in html  # a page, not a JSON dump
    assert harness.client.get(f"/trials/{record.trial_id[:8]}?sig={signature}").status_code == 403
    assert harness.client.get("/trials/<script>").status_code == 403


def _graded_with_its_link(harness: Harness) -> tuple[str, str]:
    """Grade the opened PR; its trial id and the signature the App's links carry."""
    harness.deliver("pull_request", raw("pull_request/opened.payload.json"))
    harness.drain()
    [record] = harness.service.ctx.records.for_pull(REPO, 2)
    trial_id = str(record.trial_id)
    return trial_id, TrialLinks(SECRET).signature(trial_id)


def test_the_trials_page_opens_only_with_the_apps_signature(
    make_harness: Callable[..., Harness],
) -> None:
    harness = make_harness(public_url="https://evals.example.com")
    trial_id, signed = _graded_with_its_link(harness)
    path = f"/trials/{trial_id}"
    other = TrialLinks("another App's secret").signature(trial_id)
    # One hex digit changed (to another: a signature may end in "0" already).
    altered = signed[:-1] + ("1" if signed[-1] == "0" else "0")
    for query in ("", "?sig=", f"?sig={other}", f"?sig={altered}", f"?sig={signed.upper()}"):
        answer = harness.client.get(path + query)
        assert answer.status_code == 403, query
        assert "not signed by the App" in answer.get_data(as_text=True)
        assert trial_id not in answer.get_data(as_text=True)
    assert harness.client.get(f"{path}?sig={signed}").status_code == 200
    unknown = "t" * 40
    assert (
        harness.client.get(
            f"/trials/{unknown}?sig={TrialLinks(SECRET).signature(unknown)}"
        ).status_code
        == 404
    )


def test_without_a_gold_anchor_the_check_run_says_the_eval_is_broken(
    make_harness: Callable[..., Harness],
) -> None:
    harness = make_harness(anchored=False)
    harness.deliver("pull_request", raw("pull_request/opened.payload.json"))
    harness.drain()
    [run] = harness.github.check_runs
    assert run["conclusion"] == "neutral"
    assert "This eval is broken:" in run["output"]["summary"]
    assert "fewer than the minimum 30" in run["output"]["summary"]


def test_a_patch_that_does_not_compile_fails_its_check_while_the_eval_is_unanchored(
    make_harness: Callable[..., Harness],
) -> None:
    harness = make_harness(anchored=False)
    harness.set_pull("no-compile")
    harness.deliver("pull_request", raw("pull_request/opened.payload.json"))
    harness.drain()
    [run] = harness.github.check_runs
    assert run["conclusion"] == "failure"
    assert run["output"]["title"].startswith("fail at compile")
    summary = run["output"]["summary"]
    assert "This eval is broken:" in summary and "so this check fails all the same" in summary
    assert "- **Gold anchor:** not anchored (" in summary
    assert "No number from this evaluation is publishable until the publication gate" in summary


def test_pr_that_does_not_parse_fails_with_annotations(harness: Harness) -> None:
    harness.set_pull("no-parse")
    assert (
        harness.deliver("pull_request", raw("pull_request/opened.payload.json")).status_code == 202
    )
    harness.drain()
    gh = harness.github
    assert gh.schema_errors == []
    [run] = gh.check_runs
    assert run["conclusion"] == "failure"
    assert run["output"]["title"].startswith("fail at apply")
    assert run["annotations"], run["output"]
    note = run["annotations"][0]
    assert note["path"].endswith("Calculator.java") and note["annotation_level"] == "failure"
    assert note["start_line"] >= 1


def test_same_delivery_twice_concurrently_gives_one_job_and_one_check_run(harness: Harness) -> None:
    body = raw("pull_request/opened.payload.json")
    barrier = threading.Barrier(2)
    statuses: list[int] = []

    def send() -> None:
        client = harness.service.app.test_client()
        barrier.wait()
        twin = Harness(harness.service, harness.github, client)
        statuses.append(twin.deliver("pull_request", body, delivery="same-guid").status_code)

    threads = [threading.Thread(target=send) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert statuses == [202, 202]
    assert len(harness.service.queue.admin.jobs()) == 1
    harness.drain()
    assert len(harness.github.check_runs) == 1


def test_same_event_under_a_new_delivery_id_is_still_one_check_run(harness: Harness) -> None:
    body = raw("pull_request/opened.payload.json")
    first = harness.deliver("pull_request", body)
    harness.drain()
    second = harness.deliver("pull_request", body)
    harness.drain()
    assert first.json["jobs"] and second.json == {"duplicate": False, "jobs": []}
    assert len(harness.github.check_runs) == 1
    assert len(harness.github.writes("POST", "/check-runs")) == 1


def test_a_late_older_head_is_never_published(harness: Harness) -> None:
    sha1, sha2 = "1" * 40, "2" * 40
    harness.set_pull("good", head_sha=sha2)
    assert (
        harness.deliver(
            "pull_request", with_head("pull_request/synchronize.payload.json", sha2)
        ).status_code
        == 202
    )
    assert (
        harness.deliver(
            "pull_request", with_head("pull_request/synchronize.payload.json", sha1)
        ).status_code
        == 202
    )
    harness.drain()
    assert harness.github.runs_for(sha1) == []
    assert [r["conclusion"] for r in harness.github.runs_for(sha2)] == ["success"]
    results = [job["result"] for job in harness.service.queue.admin.jobs()]
    assert any(r.startswith("superseded") for r in results)


def test_head_moving_during_grading_closes_the_old_check_as_superseded(harness: Harness) -> None:
    sha1, sha2 = "1" * 40, "2" * 40
    harness.set_pull("good", head_sha=sha1)
    harness.deliver("pull_request", with_head("pull_request/synchronize.payload.json", sha1))

    class PushThenCascade(Cascades):
        def for_plan(self, plan: RunPlan) -> Cascade:
            harness.set_pull("good", head_sha=sha2)  # a push lands while sha1 is graded
            return super().for_plan(plan)

    ctx = harness.service.ctx
    pushing = PushThenCascade(harness.service.settings, ctx.store, ctx.specs)
    ctx.grading = dataclasses.replace(ctx.grading, cascades=pushing)
    harness.drain()
    [run] = harness.github.runs_for(sha1)
    assert run["conclusion"] == "neutral" and run["output"]["title"].startswith("superseded")


def test_check_run_rerequested_with_no_pull_requests_finds_the_pr_by_head_sha(
    harness: Harness,
) -> None:
    body = raw("check_run/rerequested.payload.json")
    event = json.loads(body)
    assert event["check_run"]["pull_requests"] == []
    sha = event["check_run"]["head_sha"]
    data = pull_data(sha, number=7)
    data["base"]["repo"]["full_name"] = event["repository"]["full_name"]
    harness.github.add_pull(
        FakePull(data, (PATCHES / "good.diff").read_text(), JAVA_BASE), installation=1
    )
    harness.github.files[(event["repository"]["full_name"], ".github/migration-evals.yml")] = CONFIG
    assert harness.deliver("check_run", body).status_code == 202
    harness.drain()
    [run] = harness.github.runs_for(sha)
    assert run["conclusion"] == "success"
    assert run["external_id"] == f"{event['repository']['full_name']}#7@{sha}:standard"


def test_check_suite_rerequested_regrades_into_the_same_check_run(harness: Harness) -> None:
    harness.deliver("pull_request", raw("pull_request/opened.payload.json"))
    harness.drain()
    assert (
        harness.deliver("check_suite", raw("check_suite/rerequested.payload.json")).status_code
        == 202
    )
    harness.drain()
    gh = harness.github
    assert len(gh.check_runs) == 1
    completions = [
        c
        for c in gh.writes("PATCH", "/check-runs/{check_run_id}")
        if "conclusion" in (c.body or {})
    ]
    assert len(completions) == 2
    assert gh.schema_errors == []


def test_requested_action_with_a_foreign_identifier_is_not_handled(harness: Harness) -> None:
    assert (
        harness.deliver("check_run", raw("check_run/requested_action.payload.json")).status_code
        == 204
    )


def test_requested_action_strict_grades_a_strict_check_run(harness: Harness) -> None:
    data = payload("check_run/requested_action.payload.json")
    pull = harness.github.pulls[(REPO, 2)]
    data["repository"]["full_name"] = REPO
    data["installation"]["id"] = INSTALLATION
    data["check_run"]["head_sha"] = pull.head_sha
    data["check_run"]["pull_requests"] = [{"number": 2}]
    data["requested_action"]["identifier"] = "strict"
    assert harness.deliver("check_run", json.dumps(data).encode()).status_code == 202
    harness.drain()
    [run] = harness.github.check_runs
    assert run["name"] == "migration-evals (strict)" and run["status"] == "completed"
    assert run["external_id"].endswith(":strict")


def test_a_broken_config_is_shown_in_a_neutral_check_run(
    make_harness: Callable[..., Harness],
) -> None:
    harness = make_harness(config="agents:\n  - author: Codertocat\n    model: gpt-9\nrecipes: 3\n")
    harness.deliver("pull_request", raw("pull_request/opened.payload.json"))
    harness.drain()
    [run] = harness.github.check_runs
    assert run["conclusion"] == "neutral"
    assert run["output"]["title"] == (
        f"configuration error in .github/migration-evals.yml {REPLAY_NOTE}"  # a replay harness
    )
    assert "recipes: 3 is not of type 'array'" in run["output"]["summary"]


@pytest.mark.parametrize(
    ("config", "problem"),
    [
        (BILLION_LAUGHS, "anchors are not allowed"),
        ("agents: " + "[" * 5000 + "]" * 5000 + "\n", "nests deeper than 32 levels"),
    ],
    ids=["billion-laughs", "5000-deep"],
)
def test_a_hostile_config_is_a_neutral_configuration_error_and_the_app_keeps_answering(
    make_harness: Callable[..., Harness], config: str, problem: str
) -> None:
    harness = make_harness(config=config)
    harness.deliver("pull_request", raw("pull_request/opened.payload.json"))
    started = time.monotonic()
    harness.drain()
    assert time.monotonic() - started < 10  # refused, not expanded
    assert harness.client.get("/healthz").status_code == 200
    [run] = harness.github.check_runs
    assert run["conclusion"] == "neutral"
    title = f"configuration error in .github/migration-evals.yml {REPLAY_NOTE}"
    assert run["output"]["title"] == title  # the harness replays
    assert problem in run["output"]["summary"]
    [job] = harness.service.queue.admin.jobs()
    assert job["state"] == "done" and job["result"].startswith("configuration error")


def test_no_config_means_no_agents_and_no_check_run(make_harness: Callable[..., Harness]) -> None:
    harness = make_harness(config=None)
    harness.deliver("pull_request", raw("pull_request/opened.payload.json"))
    harness.drain()
    assert harness.github.check_runs == []
    assert "not an agent" in harness.service.queue.admin.jobs()[0]["result"]


def test_merged_agent_pr_goes_to_survival_tracking(harness: Harness) -> None:
    data = payload("pull_request/closed.merged.create-issue-branch.json")
    repo, number = data["repository"]["full_name"], data["pull_request"]["number"]
    merged = copy.deepcopy(data["pull_request"])
    harness.github.add_pull(
        FakePull(merged, "", JAVA_BASE), installation=data["installation"]["id"]
    )
    harness.github.files[(repo, ".github/migration-evals.yml")] = CONFIG.replace(
        "Codertocat", merged["user"]["login"]
    )
    assert harness.deliver("pull_request", json.dumps(data).encode()).status_code == 202
    assert harness.drain() == 1
    [job] = harness.service.queue.admin.jobs()
    assert job["kind"] == "track-merge" and job["state"] == "done"
    assert job["result"] == f"tracked {repo}#{number} for survival mining"
    [tracked] = tracked_prs(harness.service.store.db)
    assert (tracked.repo, tracked.number) == (repo, number)
    assert tracked.merge_commit_sha == merged["merge_commit_sha"]
    assert tracked.merged_at is not None


def test_closed_without_merge_is_not_handled(harness: Harness) -> None:
    assert (
        harness.deliver("pull_request", raw("pull_request/closed.payload.json")).status_code == 204
    )


def test_reconciliation_enqueues_open_agent_prs_without_a_check(harness: Harness) -> None:
    assert harness.service.reconcile() == 1
    harness.drain()
    assert len(harness.github.check_runs) == 1
    assert harness.service.reconcile() == 0


def test_the_trial_page_shows_the_patch_as_applied_and_every_commands_output(
    make_harness: Callable[..., Harness],
) -> None:
    harness = make_harness(public_url="https://evals.example.com")
    trial_id, signature = _graded_with_its_link(harness)
    page = harness.client.get(f"/trials/{trial_id}?sig={signature}")
    html = page.get_data(as_text=True)
    assert page.status_code == 200
    added = next(
        line
        for line in (PATCHES / "good.diff").read_text().splitlines()
        if line.startswith("+") and not line.startswith("+++")
    )
    assert "<h2>Patch</h2>" in html and f'<span class="add">{escape(added)}</span>' in html
    assert "<h2>Logs</h2>" in html
    assert "<h3>compile</h3>" in html and "<h3>tests</h3>" in html  # each tier's commands
