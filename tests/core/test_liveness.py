"""A running run's process is gone when its lease runs out, or at once when its process id
is gone from the machine that ran it."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from migration_evals.core.liveness import Holder, RunState, gone_reason, pid_alive
from migration_evals.core.store import Store
from tests.fakes import FakeClock

START = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
HOLDER = Holder(pid=4242, host="grader-1", lease_s=30.0)


def _alive(_pid: int) -> bool:
    return True


def _dead(_pid: int) -> bool:
    return False


def test_a_run_within_its_lease_is_not_gone() -> None:
    now = START + timedelta(seconds=29)
    assert gone_reason(START, HOLDER, now, here="elsewhere", alive=_dead) is None


def test_a_run_past_its_lease_is_gone_whatever_host_ran_it() -> None:
    now = START + timedelta(seconds=31)
    reason = gone_reason(START, HOLDER, now, here="elsewhere", alive=_alive)
    assert reason == "no heartbeat for 31 s (its lease is 30 s)"


def test_on_its_own_host_a_vanished_process_is_gone_at_once() -> None:
    now = START + timedelta(seconds=1)
    reason = gone_reason(START, HOLDER, now, here="grader-1", alive=_dead)
    assert reason == "its process 4242 on grader-1 is gone"
    assert gone_reason(START, HOLDER, now, here="grader-1", alive=_alive) is None


def test_a_run_from_before_heartbeats_gets_the_default_lease() -> None:
    assert gone_reason(START, None, START + timedelta(seconds=29), here="h") is None
    assert gone_reason(START, None, START + timedelta(seconds=31), here="h") is not None


def test_this_process_is_alive_and_a_reaped_child_is_not() -> None:
    assert pid_alive(os.getpid())
    child = os.fork()
    if child == 0:
        os._exit(0)
    os.waitpid(child, 0)
    assert not pid_alive(child)


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store.open(f"sqlite:///{tmp_path / 'ledger.db'}")


def _status(store: Store, run_id: str) -> str:
    row = store.runs.run(run_id)
    assert row is not None
    return str(row["status"])


def test_a_silent_run_is_marked_interrupted_once_its_lease_ends(store: Store) -> None:
    store.runs.start_run("r-1", {}, holder=HOLDER)
    clock = FakeClock(datetime.now(UTC))
    assert store.runs.beat("r-1", clock.now())
    clock.advance(seconds=29)
    assert store.runs.mark_interrupted(clock.now(), here="elsewhere") == []
    assert store.runs.beat("r-1", clock.now())  # beaten again: a new lease
    clock.advance(seconds=31)
    marked = store.runs.mark_interrupted(clock.now(), here="elsewhere")
    assert [run.run_id for run in marked] == ["r-1"]
    assert _status(store, "r-1") == RunState.INTERRUPTED
    assert store.runs.unfinished_runs() == {"r-1": "interrupted"}
    assert not store.runs.beat("r-1", clock.now())  # an interrupted run is not beaten back to life


def test_finished_runs_are_never_marked(store: Store) -> None:
    store.runs.start_run("r-done", {}, holder=HOLDER)
    store.runs.finish_run("r-done", "completed", {})
    later = datetime.now(UTC) + timedelta(hours=1)
    assert store.runs.mark_interrupted(later, here="grader-1", alive=_dead) == []
    assert store.runs.unfinished_runs() == {}


def test_only_an_interrupted_run_can_be_reopened_and_only_once(store: Store) -> None:
    store.runs.start_run("r-1", {}, holder=HOLDER)
    assert not store.runs.reopen_run("r-1", HOLDER)  # still running
    store.runs.mark_interrupted(datetime.now(UTC), here="grader-1", alive=_dead)
    assert store.runs.reopen_run("r-1", HOLDER)
    assert not store.runs.reopen_run("r-1", HOLDER)  # a second resume finds it taken
    row = store.runs.run("r-1")
    assert row is not None and row["status"] == "running" and row["resumed_at"] is not None
