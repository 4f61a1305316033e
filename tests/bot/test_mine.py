"""``migration-evals mine``: gold, survival, status and retro, end to end.

GitHub is the test upstream (recorded through the recording transport, then replayed with
the upstream gone); the repository is a real git history with fixed dates; ``--as-of`` moves
time instead of waiting.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from migration_evals.bot.cli import main
from migration_evals.bot.exits import ExitStatus
from migration_evals.bot.mining import github_advice, open_mining_store
from migration_evals.bot.settings import settings_from_env
from migration_evals.core.errors import ConfigError
from migration_evals.core.gold import gold_rows
from migration_evals.gate.anchor import anchor_from_rows
from migration_evals.miners.tracking import TrackedPR, track_pr
from migration_evals.oracles.ecosystems.registry import load_specs
from tests.conftest import ROOT, SPECS_DIR, MixedProjects
from tests.miners.github_upstream import TOKEN, FakeGitHub, FakePull, FakeRepo
from tests.miners.histories import History, day

REPO = "example/app"
AS_OF = day(60).isoformat()


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MIGRATION_EVALS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("MIGRATION_EVALS_DB_URL", f"sqlite:///{tmp_path / 'mine.db'}")
    monkeypatch.setenv("MIGRATION_EVALS_GITHUB_TOKEN", TOKEN)
    monkeypatch.setenv("MIGRATION_EVALS_AGENT_AUTHORS", "agent-bot=gpt-5, other-bot")
    # The upstream is a loopback fake: no pause between requests to it.
    monkeypatch.setenv("MIGRATION_EVALS_GITHUB_REQUEST_INTERVAL", "0")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def specs(env: Path) -> Path:
    """The real specs with the unlock at 2 PRs, so a test can reach it."""
    copy = env / "specs"
    shutil.copytree(SPECS_DIR, copy)
    oracle = copy / "oracle.yaml"
    oracle.write_text(oracle.read_text().replace("retro_unlock_prs: 50", "retro_unlock_prs: 2"))
    return copy


def _iso(when: object) -> str:
    return str(when).replace("+00:00", "Z").replace(" ", "T")


def project(env: Path) -> tuple[History, FakeRepo]:
    """Two agent PRs merged (days 1 and 2) and a human's closed unmerged, on a real repo."""
    history = History.create(env / "app")
    merged = [history.merged_pr(n, day(n)) for n in (1, 2)]
    history.commit({"later.txt": "x\n"}, "day 40", day(40))
    pulls = []
    for pr in merged:
        diff = subprocess.run(
            ["git", "diff", pr.base_sha, pr.head_sha],
            cwd=history.path,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert pr.merged_at is not None
        pulls.append(
            FakePull(
                pr.number,
                "agent-bot",
                _iso(day(pr.number - 0.5)),
                pr.head_sha,
                pr.base_sha,
                merged_at=_iso(pr.merged_at),
                closed_at=_iso(pr.merged_at),
                merge_commit_sha=pr.merge_commit_sha,
                diff=diff,
            )
        )
    base = history.head()
    pulls.append(FakePull(3, "octocat", _iso(day(3)), base, base, closed_at=_iso(day(4))))
    repo = FakeRepo(full_name=REPO, clone_url=str(history.path), pulls=pulls)
    return history, repo


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict, str]:  # type: ignore[type-arg]
    code = main([*argv, "--json"])
    captured = capsys.readouterr()
    return code, json.loads(captured.out) if captured.out.strip() else {}, captured.err


def test_mine_gold_records_github_then_replays_it_offline(
    env: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, repo = project(env)
    gold = [
        "mine",
        "gold",
        "--repo",
        REPO,
        "--recipe",
        "java8-to-17",
        "--as-of",
        AS_OF,
        "--cassettes",
        str(env / "cassettes"),
    ]
    with FakeGitHub([repo]) as upstream:
        monkeypatch.setenv("MIGRATION_EVALS_GITHUB_API_URL", upstream.base_url)
        code, recorded, err = run(capsys, *gold, "--mode", "record", "--no-grade")
    assert code == 0, err
    labels = {row["pr_number"]: row["label"] for row in recorded["rows"]}
    assert labels == {1: "accepted", 2: "accepted", 3: "rejected"}
    # The day-30 state of PR 1 (merged day 1) is PR 2's merge: the last commit by day 31.
    state = {row["pr_number"]: row["evidence"].get("state_commit") for row in recorded["rows"]}
    assert state[1] == repo.pulls[1].merge_commit_sha
    assert {row["model"] for row in recorded["rows"]} == {"gpt-5", "unknown"}
    assert list((env / "cassettes" / "github").glob("*.json"))

    # Replay: the upstream is gone, a fresh database; this time the changesets are graded.
    monkeypatch.setenv("MIGRATION_EVALS_DB_URL", f"sqlite:///{env / 'replay.db'}")
    code, replayed, err = run(capsys, *gold)
    assert code == 0, err
    assert {r["pr_number"]: r["label"] for r in replayed["rows"]} == labels
    assert all(row["funnel_verdict"] for row in replayed["rows"])
    with sqlite3.connect(env / "replay.db") as db:
        graded = {row[0] for row in db.execute("SELECT DISTINCT changeset_id FROM ledger")}
    assert graded == {row["changeset_id"] for row in replayed["rows"]}

    # Again: final labels stay, nothing is regraded.
    code, again, _ = run(capsys, *gold)
    assert (code, again["rows"], len(again["skipped_final"])) == (0, [], 3)


def test_mine_gold_needs_a_selection(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mine", "gold", "--recipe", "java8-to-17"]) == 1
    assert "say which pull requests" in capsys.readouterr().err


def test_a_replay_with_nothing_recorded_suggests_the_live_api_and_its_token(
    env: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MIGRATION_EVALS_GITHUB_TOKEN")
    argv = ["mine", "gold", "--repo", "nobody/recorded", "--recipe", "java8-to-17"]
    argv += ["--cassettes", str(env / "empty")]
    assert main(argv) == 1
    err = capsys.readouterr().err.splitlines()[-1]
    assert err.startswith(
        "migration-evals: error: repository nobody/recorded: "
        "GET /repos/nobody/recorded: no cassette"
    )
    assert "--mode live (or --mode record to keep cassettes) with " in err
    assert "MIGRATION_EVALS_GITHUB_TOKEN set" in err
    assert "mine gold --git PATH_OR_URL" in err


@pytest.mark.parametrize(
    ("token", "problem", "advice"),
    [
        (None, "GitHub answered 403 for x: rate limit", "allows 60 requests an hour"),
        ("t", "GitHub answered 404 for repository a/b: Not Found", "can read them"),
        ("t", "cannot reach GitHub for repository a/b: timeout", "check the network"),
    ],
)
def test_live_github_problems_say_what_to_do(token: str | None, problem: str, advice: str) -> None:
    settings = settings_from_env({"MIGRATION_EVALS_MODE": "live"})
    if token:
        settings = settings.with_overrides(github_token=token)
    assert advice in github_advice(settings, problem)


def test_mine_gold_checks_recipe_params(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Rewrites are optional since issue 14 (read from the diff); an empty map is still wrong.
    params = '{"rewrites": {}}'
    argv = [
        "mine",
        "gold",
        "--repo",
        REPO,
        "--recipe",
        "base-image-bump",
        "--recipe-params",
        params,
    ]
    assert main(argv) == 1
    assert "--recipe-params for base-image-bump: {} should be non-empty" in (
        capsys.readouterr().err
    )


def _one_historical_changeset(env: Path) -> Path:
    line = json.loads((ROOT / "examples/changesets/java.jsonl").read_text().splitlines()[0])
    base = ROOT / "examples" / "changesets"
    line["repo"] = str((base / line["repo"]).resolve())
    line["patch_file"] = str((base / line["patch_file"]).resolve())
    path = env / "historical.jsonl"
    path.write_text(json.dumps(line) + "\n")
    return path


def test_survival_status_and_retro_around_the_unlock(
    env: Path, specs: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, repo = project(env)
    store = open_mining_store(settings_from_env())
    for pull in repo.pulls[:2]:  # registered by the bot while still open
        track_pr(
            store.ledger,
            TrackedPR(
                REPO,
                pull.number,
                pull.head_sha,
                pull.base_sha,
                "agent-bot",
                True,
                day(0),
                None,
                None,
                None,
            ),
        )
    store.close()
    historical = _one_historical_changeset(env)
    common = ["--specs", str(specs), "--as-of", AS_OF]

    code, _, err = run(capsys, "mine", "retro", str(historical), *common)
    assert code == 1
    assert "retroactive scoring is locked: 0 of 2 agent PRs merged, aged and labelled" in err
    assert "2 more needed (2 more agent PR(s) must merge before it can be reached)" in err

    with FakeGitHub([repo]) as upstream:
        monkeypatch.setenv("MIGRATION_EVALS_GITHUB_API_URL", upstream.base_url)
        survival = ["mine", "survival", "--mode", "record", "--cassettes", str(env / "c")]
        code, report, err = run(capsys, *survival, *common)
    assert code == 0, err
    assert report["labels"] == {f"{REPO}#1": "accepted", f"{REPO}#2": "accepted"}
    assert report["newly_unlocked"] is True
    assert report["unlock"]["prs"] == [f"{REPO}#1", f"{REPO}#2"]

    code, status, _ = run(capsys, "mine", "status", *common)
    assert (code, status["unlocked"], status["labelled"], status["needed"]) == (0, True, 2, 0)

    code, graded, err = run(capsys, "mine", "retro", str(historical), *common)
    assert code == 0, err
    assert graded["retroactive"] is True
    with sqlite3.connect(env / "mine.db") as db:
        marked = db.execute("SELECT trial_id, changeset_id FROM retro_trials").fetchall()
        options = db.execute("SELECT options FROM runs").fetchall()
    assert marked == [(graded["trials"][0]["trial_id"], "java-calc/good")]
    assert json.loads(options[-1][0])["retroactive"] is True


def test_status_in_words(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mine", "status", "--as-of", AS_OF]) == 0
    out = capsys.readouterr().out
    assert "retroactive scoring: locked" in out
    assert "labelled:  0 of 50 agent PRs" in out
    assert "earliest:  not reachable from current merges" in out


def test_agent_authors_setting() -> None:
    settings = settings_from_env({"MIGRATION_EVALS_AGENT_AUTHORS": "a[bot]=gpt-5, b ,c=,"})
    assert settings.agent_authors == {"a[bot]": "gpt-5", "b": "", "c": ""}
    assert settings_from_env({}).github_app.api_url == "https://api.github.com"
    with pytest.raises(ConfigError, match="names no author"):
        settings_from_env({"MIGRATION_EVALS_AGENT_AUTHORS": "=gpt-5"})
    assert "ghp" not in repr(settings_from_env({"MIGRATION_EVALS_GITHUB_TOKEN": TOKEN}))


def test_live_requests_are_spaced_a_quarter_second_apart_unless_set() -> None:
    assert settings_from_env({}).github_request_interval_s == 0.25
    spaced = {"MIGRATION_EVALS_GITHUB_REQUEST_INTERVAL": "1.5"}
    assert settings_from_env(spaced).github_request_interval_s == 1.5
    with pytest.raises(ConfigError, match="GITHUB_REQUEST_INTERVAL='-1' must not be negative"):
        settings_from_env({"MIGRATION_EVALS_GITHUB_REQUEST_INTERVAL": "-1"})


def test_as_of_cannot_be_in_the_future(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mine", "status", "--as-of", "2999-01-01"]) == 1
    assert "--as-of 2999-01-01T00:00:00 is in the future" in capsys.readouterr().err


LABEL_KEYS = {
    "commit",
    "pr",
    "label",
    "merged_at",
    "state_commit",
    "window_end",
    "added",
    "alive",
    "revert",
    "reason",
}


def test_mine_gold_from_git_alone_labels_offline_and_grows_the_gold_table(
    env: Path, capsys: pytest.CaptureFixture[str], mixed_projects: MixedProjects
) -> None:
    project = mixed_projects(env / "app")
    argv = ["mine", "gold", "--git", str(project.history.path), "--recipe", "java8-to-17"]
    code, document, err = run(capsys, *argv, "--as-of", AS_OF)
    assert code == 0, err
    assert set(document) == {"labels", "errors"}
    assert document["errors"] == []
    assert all(set(label) == LABEL_KEYS for label in document["labels"])
    assert {label["commit"]: (label["pr"], label["label"]) for label in document["labels"]} == {
        project.merged_pr: (1, "accepted"),
        project.squashed_pr: (2, "rejected"),
        project.agent_commit: (None, "accepted"),
        project.late_pr: (5, "pending"),
    }
    squashed = next(x for x in document["labels"] if x["pr"] == 2)
    assert squashed["revert"] == project.revert
    assert squashed["window_end"] == day(32).isoformat()

    store = open_mining_store(settings_from_env())
    try:
        rows = gold_rows(store.db)
    finally:
        store.close()
    assert all(row.funnel_verdict is not None for row in rows)
    anchor = anchor_from_rows(rows, load_specs(SPECS_DIR).oracle.gate)
    assert (anchor.n + anchor.unmatched, anchor.pending) == (3, 1)


def test_mine_gold_from_a_commit_list_reports_what_git_cannot_label(
    env: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    mixed_projects: MixedProjects,
) -> None:
    monkeypatch.setenv("MIGRATION_EVALS_AGENT_AUTHORS", "ada@example.com=gpt-5")
    project = mixed_projects(env / "app")
    listed = env / "commits.jsonl"
    lines = [
        {"commit": project.squashed_pr, "merged_at": day(3).isoformat()},
        {"commit": "f" * 40, "pr": 9},
    ]
    listed.write_text("".join(json.dumps(line) + "\n" for line in lines))
    argv = ["mine", "gold", "--git", str(project.history.path), "--commits", str(listed)]
    code, document, _ = run(capsys, *argv, "--no-grade", "--as-of", AS_OF)
    assert code == ExitStatus.MINING_INCOMPLETE
    assert [(x["commit"], x["pr"], x["label"]) for x in document["labels"]] == [
        (project.squashed_pr, 2, "rejected")
    ]
    assert document["labels"][0]["merged_at"] == day(3).isoformat()
    assert document["errors"] == [
        {"commit": "f" * 40, "detail": f"commit {'f' * 40} is not in this repository"}
    ]
    store = open_mining_store(settings_from_env())
    try:
        (row,) = gold_rows(store.db)
    finally:
        store.close()
    assert (row.model, row.evidence["is_agent"]) == ("gpt-5", True)


def test_mine_gold_from_git_refuses_github_queries(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["mine", "gold", "--git", str(env), "--repo", REPO, "--no-grade"]
    assert main(argv) == 1
    assert "--git reads one repository with git alone" in capsys.readouterr().err
