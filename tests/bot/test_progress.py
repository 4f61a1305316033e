"""Progress of a batch run: when a log line is due and what it says."""

from __future__ import annotations

import threading

import pytest
from rich.console import Console

from migration_evals.bot.console import progress
from migration_evals.bot.progress import RunProgress, duration_text


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "0s"), (45.4, "45s"), (185, "3m05s"), (7620, "2h07m")],
)
def test_durations_are_short_and_exact_enough(seconds: float, text: str) -> None:
    assert duration_text(seconds) == text


def test_a_line_every_tenth_of_the_run_with_rate_eta_and_spend() -> None:
    clock = FakeClock()
    tracker = RunProgress(100, clock=clock)
    lines = []
    for _ in range(20):
        clock.now += 3.0  # one trial every 3 s: 20 trials a minute
        lines.append(tracker.advance(0.05))
    due = [line for line in lines if line is not None]
    assert len(due) == 2  # after 10 and 20 trials
    assert due[1] == (
        "grading: 20/100 trials (20%) in 1m00s, 20.0 trials/min, ETA 4m00s, "
        "$1.0000 spent (list cost)"
    )


def test_a_slow_run_gets_a_line_a_minute_and_always_the_last() -> None:
    clock = FakeClock()
    tracker = RunProgress(1000, every_s=60.0, clock=clock)
    clock.now += 30.0
    assert tracker.advance(0.0) is None
    clock.now += 31.0
    assert tracker.advance(0.0) is not None  # 61 s since the start
    finishing = RunProgress(1, clock=clock)
    line = finishing.advance(0.0)
    assert line is not None and "1/1 trials (100%)" in line and "finished" in line


def test_an_unknown_cost_drops_the_spend_instead_of_under_reporting_it() -> None:
    tracker = RunProgress(2, budget_usd=5.0, clock=FakeClock())
    assert "of the $5.00 budget" in (tracker.advance(0.25) or tracker.line())
    line = tracker.advance(None)
    assert line is not None
    assert "spent" not in line and "spend known at the end" in line


def test_off_a_terminal_progress_is_plain_log_lines() -> None:
    console = Console(record=True, force_terminal=False, width=80)
    clock = FakeClock()
    with progress(console, 3, "grading", clock=clock) as advance:
        for _ in range(3):
            clock.now += 1.0
            advance(None)
    lines = console.export_text().splitlines()
    assert [line.split(" in ")[0] for line in lines] == [
        "grading: 1/3 trials (33%)",
        "grading: 2/3 trials (67%)",
        "grading: 3/3 trials (100%)",
    ]


def test_a_run_where_nothing_finishes_still_owes_its_log_a_line() -> None:
    clock = FakeClock()
    tracker = RunProgress(10, every_s=60.0, clock=clock)
    clock.now += 59.0
    assert tracker.idle_line() is None
    clock.now += 2.0
    line = tracker.idle_line()
    assert line is not None and line.startswith("grading: 0/10 trials (0%) in 1m01s")
    assert tracker.idle_line() is None  # the next is owed a minute later
    clock.now += 60.0
    for _ in range(10):
        tracker.advance(0.0)
    clock.now += 120.0
    assert tracker.idle_line() is None  # a finished run owes nothing more


def test_off_a_terminal_a_timer_writes_the_idle_lines() -> None:
    console = Console(record=True, force_terminal=False, width=80)
    clock = FakeClock()
    waits = []

    def wait(stop: threading.Event, seconds: float) -> bool:
        waits.append(seconds)
        if len(waits) == 1:
            clock.now += seconds + 1  # a minute and a second pass with no trial done
            return False
        return stop.wait()  # then nothing more until the run ends

    with progress(console, 3, "grading", clock=clock, wait=wait):
        pass
    assert console.export_text().startswith("grading: 0/3 trials (0%) in 1m01s")
    assert waits == [60.0, 60.0]
