"""Runs that die are visible: a SIGKILLed ``run`` is marked interrupted, its leftover
workspaces are removed, the gate refuses its trials, and ``run --resume`` completes it."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from migration_evals.bot import grading
from migration_evals.bot.cli import main
from migration_evals.bot.exits import ExitStatus
from migration_evals.bot.grading import Grading, run_options
from migration_evals.bot.heartbeat import Heartbeat
from migration_evals.bot.plan import plan_of
from migration_evals.bot.resume import plan_resume
from migration_evals.bot.settings import settings_from_env
from migration_evals.core.changesets import read_changesets
from migration_evals.core.errors import ConfigError
from migration_evals.core.liveness import DEFAULT_HEARTBEAT_S, Holder
from migration_evals.core.settings import Executor
from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from migration_evals.oracles.runner import RunOutcome, RunStatus
from migration_evals.oracles.workspace import workspace_prefix
from tests.conftest import ROOT, wait_for
from tests.fakes import FakeClock

EXAMPLES = ROOT / "examples" / "changesets"
JAVA = EXAMPLES / "java.jsonl"


def _all_examples(folder: Path) -> Path:
    """Every bundled example in one file, its relative paths made absolute."""
    lines = []
    for source in sorted(EXAMPLES.glob("*.jsonl")):
        for line in source.read_text().splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            for key in ("repo", "patch_file"):
                if str(row.get(key, "")).startswith("."):
                    row[key] = str((EXAMPLES / row[key]).resolve())
            lines.append(json.dumps(row))
    target = folder / "examples.jsonl"
    target.write_text("\n".join(lines) + "\n")
    return target


def _db(env: Path) -> Path:
    return env / "results.db"


def _trials_in_ledger(db: Path) -> int:
    try:
        with sqlite3.connect(db) as conn:
            return int(conn.execute("SELECT COUNT(DISTINCT trial_id) FROM ledger").fetchone()[0])
    except sqlite3.OperationalError:  # the schema is not there yet
        return 0


def _kill_when_some_trials_are_in(command: list[str], env: Path) -> None:
    environment = {
        **os.environ,
        "MIGRATION_EVALS_CACHE_DIR": str(env / "cache"),
        "MIGRATION_EVALS_DB_URL": f"sqlite:///{_db(env)}",
        "MIGRATION_EVALS_SANDBOX_MODE": "replay",
        "MIGRATION_EVALS_SCRATCH_DIR": str(env / "scratch"),
        "MIGRATION_EVALS_HEARTBEAT_SECONDS": "0.2",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "migration_evals.bot.cli", *command],
        env=environment,
        cwd=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while _trials_in_ledger(_db(env)) == 0:
            assert process.poll() is None, "the run ended before any trial was in the ledger"
            time.sleep(0.005)
        process.send_signal(signal.SIGKILL)
    finally:
        process.kill()
        process.wait()


def _runs(db: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(db) as conn:
        return [(str(r), str(s)) for r, s in conn.execute("SELECT run_id, status FROM runs")]


def _gate(capsys: pytest.CaptureFixture[str], run_id: str) -> tuple[int, list[dict[str, str]]]:
    code = main(["gate", "check", "--run", run_id, "--json"])
    refusals: list[dict[str, str]] = json.loads(capsys.readouterr().out)["refusals"]
    return code, refusals


def test_a_sigkilled_run_is_interrupted_refused_by_the_gate_and_completed_by_resume(
    env: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    examples = _all_examples(env)
    total = len(examples.read_text().splitlines())
    scratch = env / "scratch"
    scratch.mkdir()
    monkeypatch.setenv("MIGRATION_EVALS_SCRATCH_DIR", str(scratch))
    _kill_when_some_trials_are_in(["run", str(examples)], env)
    [(run_id, status)] = _runs(_db(env))
    assert status == "running"  # nothing is told of a SIGKILL
    before = _trials_in_ledger(_db(env))
    assert 0 < before < total
    leftover = scratch / (workspace_prefix(run_id) + "killed")
    (leftover / "src").mkdir(parents=True, exist_ok=True)

    code, refusals = _gate(capsys, run_id)
    assert code == ExitStatus.GATE_REFUSED
    incomplete = [r for r in refusals if r["code"] == "incomplete_run"]
    assert len(incomplete) == 1 and f"run {run_id} was interrupted" in incomplete[0]["detail"]
    assert f"migration-evals run --resume {run_id}" in incomplete[0]["detail"]
    assert _runs(_db(env)) == [(run_id, "interrupted")]
    assert not leftover.exists()
    assert list(scratch.iterdir()) == []

    assert main(["run", "--resume", run_id, "--json"]) == ExitStatus.OK
    resumed = json.loads(capsys.readouterr().out)
    assert resumed["run_id"] == run_id and resumed["status"] == "completed"
    assert len(resumed["trials"]) == total
    assert resumed["resumed"].endswith(f"{total - before} graded now")
    assert _runs(_db(env)) == [(run_id, "completed")]
    with sqlite3.connect(_db(env)) as conn:
        twice = conn.execute(
            "SELECT trial_id, tier FROM ledger GROUP BY trial_id, tier HAVING COUNT(*) > 1"
        ).fetchall()
    assert twice == [] and _trials_in_ledger(_db(env)) == total

    code, refusals = _gate(capsys, run_id)
    assert "incomplete_run" not in [r["code"] for r in refusals]
    assert main(["ledger", "verify"]) == ExitStatus.OK


def _interrupt(env: Path, run_id: str) -> None:
    """What the next command does to a run whose process died (without killing one)."""
    store = Store.open(f"sqlite:///{_db(env)}")
    try:
        with store.db.engine.begin() as conn:
            conn.exec_driver_sql(
                "UPDATE runs SET status = 'running', pid = 1, host = 'gone', lease_s = 1, "
                "heartbeat_at = '2020-01-01T00:00:00+00:00'"
            )
        assert [r.run_id for r in store.runs.mark_interrupted(datetime.now(UTC), here="x")] == [
            run_id
        ]
    finally:
        store.close()


def _one_run(env: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["run", str(JAVA), "--json"]) == ExitStatus.OK
    run_id: str = json.loads(capsys.readouterr().out)["run_id"]
    _interrupt(env, run_id)
    return run_id


def _java_lines(env: Path) -> list[str]:
    return [line for line in _all_examples(env).read_text().splitlines() if '"java' in line]


def test_resume_refuses_other_changesets_than_the_run_was_planned_with(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id = _one_run(env, capsys)
    more = main(["run", "--resume", run_id, str(_all_examples(env))])
    assert more == ExitStatus.ERROR
    assert f"these 44 changeset(s) are not the 16 run {run_id}" in capsys.readouterr().err
    rows = [json.loads(line) for line in _java_lines(env)]
    rows[0]["patch_file"] = rows[1]["patch_file"]  # same ids, same count, another patch
    edited = env / "edited.jsonl"
    edited.write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert main(["run", "--resume", run_id, str(edited)]) == ExitStatus.ERROR
    err = capsys.readouterr().err
    assert f"these 16 changeset(s) are not the 16 run {run_id} was planned with" in err
    assert "the same file, unchanged (patches included)" in err
    assert _runs(_db(env)) == [(run_id, "interrupted")]  # nothing taken over


def test_resume_with_nothing_missing_completes_the_run_and_refuses_a_second_time(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id = _one_run(env, capsys)
    moved = env / "moved.jsonl"  # the same changesets from another file: the same identity
    moved.write_text("\n".join(_java_lines(env)) + "\n")
    assert main(["run", "--resume", run_id, str(moved), "--json"]) == ExitStatus.OK
    document = json.loads(capsys.readouterr().out)
    assert len(document["trials"]) == 16
    assert document["resumed"] == "16 trial(s) were in the ledger, 0 graded now"
    assert main(["run", "--resume", run_id]) == ExitStatus.ERROR
    assert f"run {run_id} is 'completed', not interrupted" in capsys.readouterr().err
    assert main(["run", "--resume", "r-nope"]) == ExitStatus.ERROR  # no file given: looked up
    assert "there is no run r-nope" in capsys.readouterr().err


def test_run_without_changesets_or_resume_is_a_usage_error(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run"]) == ExitStatus.USAGE
    assert "give CHANGESETS.jsonl (or --resume RUN_ID)" in capsys.readouterr().err


def test_the_heartbeat_moves_to_the_clocks_time_while_the_block_runs(tmp_path: Path) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 'ledger.db'}")
    store.runs.start_run("r-1", {}, holder=Holder(pid=1, host="h", lease_s=3.0))
    clock = FakeClock(datetime(2030, 1, 1, tzinfo=UTC))
    try:
        with Heartbeat(store.runs, "r-1", 0.01, clock=clock):
            wait_for("a heartbeat", lambda: _beat(store) == "2030-01-01T00:00:00.000000+00:00")
        store.runs.finish_run("r-1", "completed", {})
        assert not Heartbeat(store.runs, "r-1", 1.0, clock=clock).beat()  # finished: not beaten
    finally:
        store.close()


def _beat(store: Store) -> str | None:
    row = store.runs.run("r-1")
    return None if row is None else row["heartbeat_at"]


def test_the_heartbeat_interval_comes_from_the_environment_and_must_be_positive() -> None:
    assert settings_from_env({}).heartbeat_s == DEFAULT_HEARTBEAT_S
    assert settings_from_env({"MIGRATION_EVALS_HEARTBEAT_SECONDS": "2.5"}).heartbeat_s == 2.5
    with pytest.raises(ConfigError, match="HEARTBEAT_SECONDS must be positive"):
        settings_from_env({"MIGRATION_EVALS_HEARTBEAT_SECONDS": "0"})


@pytest.mark.parametrize("command", [["db", "status"], ["ledger", "verify"], ["gate", "check"]])
def test_every_checking_command_marks_a_dead_run_first(
    env: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    child = os.fork()
    if child == 0:
        os._exit(0)
    os.waitpid(child, 0)  # a process id that is gone from this machine
    store = Store.open(f"sqlite:///{_db(env)}")
    store.runs.start_run("r-dead", {}, holder=Holder(child, socket.gethostname(), 30.0))
    store.close()
    main(command)
    assert _runs(_db(env)) == [("r-dead", "interrupted")]
    err = capsys.readouterr().err
    assert f"run r-dead was marked interrupted: its process {child}" in err
    assert "`migration-evals run --resume r-dead`" in err


def test_resuming_a_celery_run_watches_all_of_its_jobs_again(env: Path, specs: SpecSet) -> None:
    settings = settings_from_env({"MIGRATION_EVALS_DB_URL": f"sqlite:///{_db(env)}"})
    celery = settings.with_overrides(scale=replace(settings.scale, executor=Executor.CELERY))
    plan = plan_of(celery, specs)
    changesets = [located.changeset for located in read_changesets(JAVA, specs)]
    store = Store.open(settings.db_url)
    watched: list[dict[str, object]] = []

    def remote(*args: object, **kwargs: object) -> RunOutcome:
        watched.append({"changesets": args[4], **kwargs})
        return RunOutcome("r-celery", [], RunStatus.COMPLETED)

    try:
        store.runs.start_run("r-celery", run_options(plan, {}, changesets), holder=None)
        store.runs.mark_interrupted(datetime(2100, 1, 1, tzinfo=UTC), here="x")
        resumption = plan_resume(store, specs, "r-celery", changesets)
        assert len(resumption.missing) == len(changesets)  # nothing in the ledger yet
        grading.resume(resumption, Grading.of(settings, store, specs, remote))
        row = store.runs.run("r-celery")
    finally:
        store.close()
    [call] = watched
    assert call["resume"] is True and call["run_id"] == "r-celery"
    assert list(call["changesets"]) == changesets  # type: ignore[call-overload]
    assert row is not None and row["status"] == "running" and row["resumed_at"]
