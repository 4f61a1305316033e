"""How far a batch run has got: done/total, rate, time left and spend.

A terminal gets a live bar; a log (a pipe, a file, a CI job) gets one plain line every
``every_trials`` trials or ``every_s`` seconds, whichever comes first, and one at the end,
so that an overnight run's log shows it is alive and when it will finish; ``idle_line``
gives the line a run owes its log while no trial finishes (a hung build shows). Time
comes from an injected clock, so tests advance it instead of sleeping.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["RunProgress", "duration_text"]

# A line per tenth of the run at most, and at least one a minute while trials finish.
_LINES_PER_RUN = 10
_EVERY_S = 60.0


def duration_text(seconds: float) -> str:
    """``45s``, ``3m05s``, ``2h07m``: short enough for a log line, exact enough to plan by."""
    whole = max(0, round(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    if minutes:
        return f"{minutes}m{secs:02d}s"
    return f"{secs}s"


def _rate_text(per_s: float) -> str:
    return f"{per_s:.1f} trials/s" if per_s >= 1 else f"{per_s * 60:.1f} trials/min"


def _default_every(total: int) -> int:
    return max(1, -(-total // _LINES_PER_RUN))


@dataclass
class RunProgress:
    """Counts finished trials and their list cost; ``advance`` says when a line is due.

    Spend is the list cost, the figure ``--budget`` is checked against. A trial whose cost
    is not known here (graded on a worker elsewhere) leaves the spend out of every later
    line rather than under-reporting it.
    """

    total: int
    label: str = "grading"
    budget_usd: float | None = None
    every_trials: int = 0  # 0: a tenth of the run
    every_s: float = _EVERY_S
    clock: Callable[[], float] = time.monotonic
    done: int = field(default=0, init=False)
    spent_usd: float | None = field(default=0.0, init=False)

    def __post_init__(self) -> None:
        self.every_trials = self.every_trials or _default_every(self.total)
        self._started = self.clock()
        self._last_line_at = self._started
        self._last_line_done = 0
        # advance (the ledger writer's thread) and idle_line (a timer's) may race.
        self._lock = threading.Lock()

    def advance(self, cost_usd: float | None) -> str | None:
        """Count one finished trial; returns the log line when one is due, else None."""
        with self._lock:
            return self._advance(cost_usd)

    def idle_line(self) -> str | None:
        """The line due when ``every_s`` passed with no line, though no trial finished."""
        with self._lock:
            now = self.clock()
            if self.done >= self.total or now - self._last_line_at < self.every_s:
                return None
            self._last_line_at = now
            return self.line()

    def _advance(self, cost_usd: float | None) -> str | None:
        self.done += 1
        if cost_usd is None or self.spent_usd is None:
            self.spent_usd = None
        else:
            self.spent_usd += cost_usd
        now = self.clock()
        due = (
            self.done >= self.total
            or self.done - self._last_line_done >= self.every_trials
            or now - self._last_line_at >= self.every_s
        )
        if not due:
            return None
        self._last_line_at, self._last_line_done = now, self.done
        return self.line()

    def rate_per_s(self) -> float | None:
        elapsed = self.clock() - self._started
        return self.done / elapsed if elapsed > 0 and self.done else None

    def status(self) -> str:
        """Rate, time left and spend: the part of a line a progress bar does not draw."""
        rate = self.rate_per_s()
        left = self.total - self.done
        parts = ["rate unknown" if rate is None else _rate_text(rate)]
        if left <= 0:
            parts.append("finished")
        elif rate is not None:
            parts.append(f"ETA {duration_text(left / rate)}")
        parts.append(self._spend())
        return ", ".join(parts)

    def line(self) -> str:
        share = self.done / self.total if self.total else 1.0
        elapsed = duration_text(self.clock() - self._started)
        return (
            f"{self.label}: {self.done}/{self.total} trials ({share:.0%}) in {elapsed}, "
            f"{self.status()}"
        )

    def _spend(self) -> str:
        if self.spent_usd is None:
            return "spend known at the end (trials graded on workers)"
        spent = f"${self.spent_usd:,.4f} spent (list cost)"
        if self.budget_usd is None:
            return spent
        return f"{spent} of the ${self.budget_usd:,.2f} budget"
